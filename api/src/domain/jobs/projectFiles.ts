import { readBlobBuffer } from '../blobs/blobStore.js';
import type { ManifestEntry } from '../blobs/paths.js';
import type { Resources } from '../resources.js';

/** Files worth reading to understand a project (source, dependency and config files). */
const TEXT_RE =
  /\.(py|pyi|ipynb|txt|toml|cfg|ini|ya?ml|json|md|sh|cu|cuh|hip|c|cc|cpp|h|hpp)$|(^|\/)(Makefile|CMakeLists\.txt|Dockerfile)$/;
const MAX_TEXT_BYTES = 256 * 1024;

/** The job's original code version and its manifest (no file contents). */
export async function loadManifest(r: Resources, jobId: string) {
  const codeVersion = await r.prisma.codeVersion.findFirstOrThrow({ where: { jobId, status: 'ORIGINAL' } });
  return { codeVersion, manifest: codeVersion.manifest as unknown as ManifestEntry[] };
}

/** One file's text, or null when it is binary or larger than the limit. */
export async function readText(r: Resources, entry: ManifestEntry, maxBytes = MAX_TEXT_BYTES): Promise<string | null> {
  if (entry.size > maxBytes) return null;
  const buf = await readBlobBuffer(r.blobs, entry.sha256);
  return buf.includes(0) ? null : buf.toString('utf8');
}

/**
 * What find_dependencies reads: the texts of source, dependency and config files, and
 * every other path with empty content (data folders are recognised by their files).
 */
export async function loadSources(r: Resources, jobId: string): Promise<Map<string, string>> {
  const { manifest } = await loadManifest(r, jobId);
  const texts = new Map<string, string>();
  let read = 0;
  for (const e of manifest) {
    const t = TEXT_RE.test(e.path) && read++ < 2000 ? await readText(r, e) : null;
    texts.set(e.path, t ?? '');
  }
  return texts;
}
