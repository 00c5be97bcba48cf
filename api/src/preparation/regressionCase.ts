/**
 * Regression cases from preparation records: a self-contained folder that re-checks one
 * transformation on the code it was tried on, without the API or a worker.
 *
 *   case.json        what was tried and decided: transformation, target, tolerance, the
 *                    bounded workload, the recorded outcome and reason, and `expect` — the
 *                    outcome the check must give now (REJECTED for a known limitation,
 *                    ACCEPTED once the transformation is fixed)
 *   original/        the files the transformation was applied to
 *   candidate.diff   the candidate the pipeline made from them (for people)
 *   reference/       the reference run's outputs, when there were any
 *   README.md
 *
 * `checkCase` applies the transformation again, runs the static checks and — when the
 * case has reference outputs and runs on a CPU — the bounded workload here, comparing its
 * outputs with the reference's within the case's tolerance. `chatgpu records check DIR`
 * runs it; api/test/preparation/regressionCases.test.ts runs every case kept in
 * api/test/preparation/cases/.
 */
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CHECKPOINT_RESUME, resumeCheckCommand } from './checkpointResume.js';
import { compareOutputs, type ComparisonCriteria, type ComparisonReport } from './compareOutputs.js';
import { runStaticChecks, type StaticCheckResult } from './runStaticChecks.js';
import { transformationByName, type Transformation } from './transformations.js';
import type { Target } from './types.js';
import { inRepo } from '../paths.js';

export const PYTHON_HELPERS = inRepo('worker/python');

export interface CaseSpec {
  /** The record it was written from. */
  recordId: string;
  jobId: string;
  step: string;
  revision: number;
  transformation: string;
  target: Target;
  tolerance: { rtol?: number; atol?: number } | null;
  /** The bounded workload, run in the candidate's folder. */
  command: string;
  recorded: { outcome: string; reason: string };
  expect: 'ACCEPTED' | 'REJECTED';
}

export interface CaseResult {
  outcome: 'ACCEPTED' | 'REJECTED';
  reason: string;
  staticChecks: StaticCheckResult;
  comparison: ComparisonReport | null;
  /** What could not be checked here (e.g. a GPU target: the run needs that hardware). */
  notChecked: string[];
}

export async function readCase(dir: string): Promise<{ spec: CaseSpec; original: Record<string, string>; binary: string[] }> {
  const spec = JSON.parse(await readFile(path.join(dir, 'case.json'), 'utf8')) as CaseSpec;
  const { text, binary } = await readTextTree(path.join(dir, 'original'));
  return { spec, original: text, binary };
}

export async function checkCase(
  dir: string,
  opts: { python: string; transform?: Transformation; timeoutMs?: number },
): Promise<CaseResult> {
  const { spec, original, binary } = await readCase(dir);
  const transform = opts.transform ?? transformationByName(spec.transformation);
  const result = await transform(original, { target: spec.target }, { python: opts.python });
  const staticChecks = await runStaticChecks(result.tree, { target: spec.target, python: opts.python });
  const notChecked: string[] = [];
  if (!staticChecks.ok) {
    const first = staticChecks.feedback
      .filter((f) => f.severity === 'error')
      .slice(0, 3)
      .map((f) => `${f.file}:${f.line}: ${f.message}`);
    return {
      outcome: 'REJECTED',
      reason: `static checks failed: ${first.join('; ') || 'see staticChecks'}`,
      staticChecks,
      comparison: null,
      notChecked,
    };
  }
  const referenceDir = path.join(dir, 'reference');
  const hasReference = !!(await stat(referenceDir).catch(() => null))?.isDirectory();
  if (!hasReference) notChecked.push('the run: the case has no reference outputs');
  else if (spec.target !== 'cpu') notChecked.push(`the run: it needs a ${spec.target} machine`);
  if (notChecked.length) return { outcome: 'ACCEPTED', reason: 'static checks pass', staticChecks, comparison: null, notChecked };

  const work = await mkdtemp(path.join(tmpdir(), 'chatgpu-case-'));
  try {
    for (const p of binary) {
      await mkdir(path.dirname(path.join(work, p)), { recursive: true });
      await copyFile(path.join(dir, 'original', p), path.join(work, p));
    }
    for (const [p, content] of Object.entries(result.tree)) {
      await mkdir(path.dirname(path.join(work, p)), { recursive: true });
      await writeFile(path.join(work, p), content);
    }
    await mkdir(path.join(work, 'outputs'), { recursive: true });
    // A checkpoint-resume candidate is checked as the stage checks it: killed half-way and resumed (checkpointResume.ts).
    const command = spec.transformation === CHECKPOINT_RESUME ? resumeCheckCommand(spec.command) : spec.command;
    const code = await runCommand(command, work, opts.python, opts.timeoutMs ?? 600_000);
    if (code.exit !== 0)
      return {
        outcome: 'REJECTED',
        reason: `the bounded workload exited ${code.exit}: ${code.stderr.slice(-500)}`,
        staticChecks,
        comparison: null,
        notChecked,
      };
    const comparison = await compareOutputs({
      reference: referenceDir,
      candidate: work,
      python: opts.python,
      ...(criteriaOf(spec) ? { criteria: criteriaOf(spec)! } : {}),
    });
    // Compare only what the reference has: the candidate's own sources are not outputs.
    const relevant = { ...comparison, files: comparison.files.filter((f) => f.kind !== 'extra' && !f.path.startsWith('.chatgpu-bin')) };
    const ok = relevant.files.length > 0 && relevant.files.every((f) => f.ok) && comparison.suspicious.length === 0;
    return {
      outcome: ok ? 'ACCEPTED' : 'REJECTED',
      reason: ok ? 'static checks pass and the outputs match the reference' : 'the outputs differ from the reference beyond the tolerance',
      staticChecks,
      comparison: relevant,
      notChecked,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Writes a case folder (the CLI fetches the pieces from the API). */
export async function writeCase(
  dir: string,
  c: { spec: CaseSpec; original: Record<string, Buffer>; candidateDiff: string; reference: Record<string, Buffer> },
): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'case.json'), JSON.stringify(c.spec, null, 2) + '\n');
  for (const [p, bytes] of Object.entries(c.original)) {
    await mkdir(path.dirname(path.join(dir, 'original', p)), { recursive: true });
    await writeFile(path.join(dir, 'original', p), bytes);
  }
  for (const [p, bytes] of Object.entries(c.reference)) {
    await mkdir(path.dirname(path.join(dir, 'reference', p)), { recursive: true });
    await writeFile(path.join(dir, 'reference', p), bytes);
  }
  await writeFile(path.join(dir, 'candidate.diff'), c.candidateDiff);
  await writeFile(
    path.join(dir, 'README.md'),
    [
      `# Regression case: ${c.spec.transformation} on ${c.spec.target}`,
      '',
      `From preparation record ${c.spec.recordId} (job ${c.spec.jobId}, step ${c.spec.step}, revision ${c.spec.revision}).`,
      `Recorded: ${c.spec.recorded.outcome} — ${c.spec.recorded.reason}`,
      '',
      `Re-check: \`npx chatgpu records check ${path.basename(dir)}\` (exit 0 when the outcome is the expected ${c.spec.expect}).`,
      '`original/` is the code the transformation was applied to, `candidate.diff` what it made of it,',
      "`reference/` the reference run's outputs (compared when the target is a CPU).",
      "Keep it under api/test/preparation/cases/ and the toolkit's tests run it; set `expect` to ACCEPTED once the transformation is fixed.",
      '',
    ].join('\n'),
  );
}

function criteriaOf(spec: CaseSpec): ComparisonCriteria | null {
  const t = spec.tolerance;
  if (!t || (t.rtol === undefined && t.atol === undefined)) return null;
  return { tolerances: { float16: t, bfloat16: t, float32: t, float64: t }, metrics: { default: t } };
}

async function readTextTree(root: string): Promise<{ text: Record<string, string>; binary: string[] }> {
  const text: Record<string, string> = {};
  const binary: string[] = [];
  const walk = async (rel: string) => {
    for (const e of await readdir(path.join(root, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) {
        const buf = await readFile(path.join(root, p));
        if (buf.includes(0) || buf.length > 2 * 1024 * 1024) binary.push(p);
        else text[p] = buf.toString('utf8');
      }
    }
  };
  await walk('');
  return { text, binary };
}

async function runCommand(command: string, cwd: string, python: string, timeoutMs: number): Promise<{ exit: number; stderr: string }> {
  // `python` in the command means the interpreter the check was given, as on a worker.
  const bin = path.join(cwd, '.chatgpu-bin');
  await mkdir(bin, { recursive: true });
  await symlink(python, path.join(bin, 'python'));
  await symlink(python, path.join(bin, 'python3'));
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], {
      cwd,
      env: {
        PATH: `${bin}:/usr/bin:/bin`,
        HOME: cwd,
        PYTHONPATH: PYTHON_HELPERS,
        CHATGPU_DEVICE: 'cpu',
        CHATGPU_OUTPUT_DIR: path.join(cwd, 'outputs'),
        PYTHONDONTWRITEBYTECODE: '1',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ exit: code ?? 1, stderr });
    });
  });
}
