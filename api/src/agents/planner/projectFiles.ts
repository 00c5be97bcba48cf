import { readFile } from 'node:fs/promises';
import type { ManifestEntry } from '../../domain/blobs/paths.js';
import type { Resources } from '../../domain/resources.js';

/** The job's original code: manifest and bounded text contents (binary files skipped). */
export async function loadProject(r: Resources, jobId: string, maxBytesPerFile = 256 * 1024) {
  const cv = await r.prisma.codeVersion.findFirstOrThrow({ where: { jobId, status: 'ORIGINAL' } });
  const manifest = cv.manifest as unknown as ManifestEntry[];
  const texts = new Map<string, string>();
  for (const e of manifest) {
    if (e.size > maxBytesPerFile) continue;
    const buf = await readFile(r.blobs.pathOf(e.sha256));
    if (buf.includes(0)) continue;
    texts.set(e.path, buf.toString('utf8'));
  }
  return { codeVersion: cv, manifest, texts };
}
