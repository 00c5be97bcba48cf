/**
 * Data downloads on the worker (issue 38, docs/data-downloads.md): the owner's network policy and
 * the cache of what download steps produced.
 *
 * Policy (`--allow-network`): tasks run without the network (bwrap --unshare-net), except
 *   never     — none ever gets it; a data-download step is refused before anything runs;
 *   downloads — (default) only a step the plan marks as a data download (requirements.download);
 *   always    — any task that asks for it (requirements.network).
 * A refusal is the task's failure (NETWORK_REFUSED), named with the URLs and the policy, so the job
 * stops before its run with that message instead of running on data that is not there.
 *
 * Cache: a download step's outputs (its `produces` paths) are kept under DATA_DIR/downloads/<key>/,
 * key = sha256 of (URLs, command, the sha256 of the step's script files). A second task with the
 * same key on this worker gets the files copied into its directory and does not run (nor download).
 * Entries are written to a temporary folder and renamed (a crash leaves no half entry); the oldest
 * used are evicted past the size limit.
 */
import { createHash, randomUUID } from 'node:crypto';
import { cp, lstat, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';

export const NETWORK_POLICIES = ['never', 'downloads', 'always'] as const;
export type NetworkPolicy = (typeof NETWORK_POLICIES)[number];
export const DEFAULT_NETWORK_POLICY: NetworkPolicy = 'downloads';
export const DEFAULT_DOWNLOAD_CACHE_MB = 4096;

export interface DownloadSpec {
  urls: string[];
  files?: string[];
}

/** What a task's requirements ask for, as the worker reads them (untrusted JSON). */
export function downloadOf(req: { download?: unknown }): DownloadSpec | null {
  const d = req.download as { urls?: unknown; files?: unknown } | undefined;
  if (!d || typeof d !== 'object' || !Array.isArray(d.urls)) return null;
  return {
    urls: d.urls.filter((u): u is string => typeof u === 'string').slice(0, 20),
    files: Array.isArray(d.files) ? d.files.filter((f): f is string => typeof f === 'string').slice(0, 20) : [],
  };
}

const named = (urls: string[]) => (urls.length ? urls.join(', ') : 'the URLs its code builds at run time');

/**
 * Whether the task gets the network under `policy`: {network} or {refused: why}, the why naming the
 * URLs and the policy.
 */
export function networkFor(
  req: { network?: unknown; download?: unknown },
  policy: NetworkPolicy,
): { network: boolean; refused?: undefined } | { refused: string } {
  const wants = req.network === true;
  if (!wants) return { network: false };
  const download = downloadOf(req);
  if (policy === 'always') return { network: true };
  if (policy === 'never')
    return {
      refused: `this step ${download ? `downloads data from ${named(download.urls)}` : 'asks for the network'}, and this worker's network policy is --allow-network never (its owner gives no task the network)`,
    };
  if (!download)
    return {
      refused:
        "this task asks for the network but the plan does not mark it as a data download, and this worker's network policy is --allow-network downloads (the network only for data-download steps)",
    };
  return { network: true };
}

/** The cache key of a download step: its URLs, command and the content of its script files (by the manifest's sha256). */
export function downloadKey(spec: DownloadSpec, command: string, manifest: { path: string; sha256: string }[]): string {
  const files = (spec.files ?? []).map((f) => [f, manifest.find((m) => m.path === f)?.sha256 ?? null]);
  return createHash('sha256')
    .update(JSON.stringify({ v: 1, urls: [...spec.urls].sort(), command, files }))
    .digest('hex');
}

export interface CachedDownload {
  key: string;
  paths: string[];
  urls: string[];
  savedAt: string;
  attemptId: string;
  bytes: number;
}

export class DownloadCache {
  readonly root: string;
  constructor(private readonly opts: { dataDir: string; maxBytes: number }) {
    this.root = path.join(opts.dataDir, 'downloads');
  }

  private entry(key: string) {
    return path.join(this.root, key);
  }

  /** Copies the cached outputs of `key` into `dir` (at their paths); null when there are none. */
  async restore(key: string, dir: string): Promise<CachedDownload | null> {
    const e = this.entry(key);
    let meta: CachedDownload;
    try {
      meta = JSON.parse(await readFile(path.join(e, 'meta.json'), 'utf8')) as CachedDownload;
    } catch {
      return null;
    }
    for (const p of meta.paths) {
      const from = path.join(e, 'files', p);
      const to = path.join(dir, p);
      if (!to.startsWith(dir + path.sep)) return null;
      await mkdir(path.dirname(to), { recursive: true });
      await cp(from, to, { recursive: true, force: true, dereference: false, verbatimSymlinks: true });
    }
    const now = new Date();
    await utimes(path.join(e, 'meta.json'), now, now).catch(() => {});
    return meta;
  }

  /**
   * Keeps `paths` of `dir` (what the step produced) under `key`; answers what was kept, or why not
   * (a path missing, or larger than the cache).
   */
  async save(
    key: string,
    dir: string,
    paths: string[],
    info: { urls: string[]; attemptId: string },
  ): Promise<{ kept: CachedDownload } | { skipped: string }> {
    const tmp = path.join(this.root, `.tmp-${randomUUID()}`);
    try {
      let bytes = 0;
      for (const p of paths) {
        const from = path.join(dir, p);
        if (!from.startsWith(dir + path.sep)) return { skipped: `${p} lies outside the task's directory` };
        bytes += await sizeOf(from).catch(() => -1);
        if (bytes < 0) return { skipped: `${p} was not produced` };
      }
      if (bytes > this.opts.maxBytes) return { skipped: `${bytes} bytes is more than the cache holds (${this.opts.maxBytes})` };
      for (const p of paths) {
        await mkdir(path.dirname(path.join(tmp, 'files', p)), { recursive: true });
        await cp(path.join(dir, p), path.join(tmp, 'files', p), { recursive: true, dereference: false, verbatimSymlinks: true });
      }
      const meta: CachedDownload = { key, paths, urls: info.urls, savedAt: new Date().toISOString(), attemptId: info.attemptId, bytes };
      await writeFile(path.join(tmp, 'meta.json'), JSON.stringify(meta));
      await rm(this.entry(key), { recursive: true, force: true });
      await rename(tmp, this.entry(key));
      await this.evict(key);
      return { kept: meta };
    } finally {
      await rm(tmp, { recursive: true, force: true }).catch(() => {});
    }
  }

  /** Removes the least recently used entries (by meta.json's time) past the size limit, never `keep`. */
  async evict(keep?: string): Promise<string[]> {
    const names = await readdir(this.root).catch(() => [] as string[]);
    const entries: { key: string; used: number; bytes: number }[] = [];
    for (const key of names) {
      if (key.startsWith('.')) continue;
      try {
        const s = await stat(path.join(this.root, key, 'meta.json'));
        const meta = JSON.parse(await readFile(path.join(this.root, key, 'meta.json'), 'utf8')) as CachedDownload;
        entries.push({ key, used: s.mtimeMs, bytes: meta.bytes });
      } catch {
        await rm(path.join(this.root, key), { recursive: true, force: true }).catch(() => {});
      }
    }
    let total = entries.reduce((n, e) => n + e.bytes, 0);
    const removed: string[] = [];
    for (const e of entries.sort((a, b) => a.used - b.used)) {
      if (total <= this.opts.maxBytes) break;
      if (e.key === keep) continue;
      await rm(path.join(this.root, e.key), { recursive: true, force: true });
      total -= e.bytes;
      removed.push(e.key);
    }
    return removed;
  }
}

async function sizeOf(p: string): Promise<number> {
  const s = await lstat(p);
  if (!s.isDirectory()) return s.size;
  let n = 0;
  for (const name of await readdir(p)) n += await sizeOf(path.join(p, name)).catch(() => 0);
  return n;
}
