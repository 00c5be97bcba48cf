/**
 * The checkpoint-resume step proposed by the run's estimate: the builtin planner knows no run length
 * before the smoke run, so the smoke run's estimate decides. When it says the full run is longer than
 * `config.preparation.resumeThresholdSec` (default 600 s), the project trains with PyTorch (a
 * `.backward()` in a Python file that imports torch) and the plan does not checkpoint by itself, the
 * job is handed back to the planner instead of starting the full run (RUNNING → PLANNING, the replan
 * transition), with evidence that says the estimate and the threshold; the planner's checkpoint-resume
 * rule reads them back (`resumeEvidence`) and plans the step, and the full run starts after it.
 * Once per job (a second smoke run's estimate does not replan again), within the replans a job may have.
 */
import type { Db } from '../../db/client.js';
import type { ManifestEntry } from '../blobs/paths.js';
import { readBlobBuffer } from '../blobs/blobStore.js';
import type { Resources } from '../resources.js';

/** The first Python file (by path) that imports torch and calls `.backward()`, or null. */
export function trainsWithTorch(files: Readonly<Record<string, string>>): string | null {
  for (const [p, text] of Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (p.endsWith('.py') && /^\s*(import torch|from torch\b)/m.test(text) && /\.backward\(/.test(text)) return p;
  }
  return null;
}

const EVIDENCE = /the smoke run estimates the full run at (\d+) s, longer than the checkpoint-resume threshold of (\d+) s/;

export function resumeEvidenceText(estimateSec: number, thresholdSec: number, file: string): string {
  return `Not failed: the smoke run estimates the full run at ${Math.round(estimateSec)} s, longer than the checkpoint-resume threshold of ${thresholdSec} s, and ${file} trains with PyTorch: planned again so that a lost machine resumes the run from a checkpoint instead of restarting it.`;
}

/** The estimate and threshold of a checkpoint-resume replan, read back from the planner's task message. */
export function resumeEvidence(text: string): { estimateSec: number; thresholdSec: number } | null {
  const m = EVIDENCE.exec(text);
  return m ? { estimateSec: Number(m[1]), thresholdSec: Number(m[2]) } : null;
}

/** Python sources of a code version worth reading for a training loop (small files only). */
async function pythonFiles(r: Resources, manifest: ManifestEntry[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of manifest.filter((f) => f.path.endsWith('.py') && f.size <= 512 * 1024).slice(0, 200))
    out[e.path] = (await readBlobBuffer(r.blobs, e.sha256)).toString('utf8');
  return out;
}

/**
 * The replan's evidence when the smoke run's estimate calls for the checkpoint-resume step (see the
 * file's header), else null. Read before the smoke run's transaction (it reads blobs).
 */
export async function resumeReplanEvidence(
  r: Resources,
  job: { jobId: string; codeVersionId: string; requirements: { checkpoint?: unknown } | null },
  estimateSec: number,
): Promise<string | null> {
  const threshold = r.config.preparation.resumeThresholdSec;
  if (!(estimateSec > threshold) || job.requirements?.checkpoint) return null;
  if (await alreadyReplanned(r.prisma, job.jobId)) return null;
  const cv = await r.prisma.codeVersion.findUnique({ where: { id: job.codeVersionId }, select: { manifest: true } });
  const file = cv ? trainsWithTorch(await pythonFiles(r, cv.manifest as unknown as ManifestEntry[])) : null;
  return file ? resumeEvidenceText(estimateSec, threshold, file) : null;
}

/** A job is replanned at most this many times (supervision/supervisorActions.ts MAX_REPLANS, not imported: no import circle). */
const MAX_REPLANS = 2;

async function alreadyReplanned(db: Db, jobId: string): Promise<boolean> {
  const done = await db.jobEvent.findMany({
    where: { jobId, kind: 'job.status', payload: { path: ['transition'], equals: 'replan' } },
    select: { payload: true },
  });
  return done.length >= MAX_REPLANS || done.some((e) => EVIDENCE.test(String((e.payload as { evidence?: unknown }).evidence ?? '')));
}
