/**
 * Checkpoints of a running task (docs/architecture.md §5, "Drain and checkpoints").
 *
 * The convention a task's program follows:
 * - CHATGPU_CHECKPOINT_DIR is a folder in its run directory (the plan's `checkpoint.path`,
 *   `checkpoint/` by default). Whatever the program writes there is its checkpoint. It may also
 *   write `chatgpu-checkpoint.json` there, `{"step": N}`, to say which epoch or step it holds.
 * - When it starts with CHATGPU_RESUME=1, the folder already holds the latest checkpoint of an
 *   earlier attempt (CHATGPU_RESUME_STEP its step, when known): the program resumes from it.
 * - Drain: the worker creates the file CHATGPU_DRAIN_FILE and sends SIGTERM to the program's
 *   processes. The program writes its checkpoint and exits; after the grace period (--drain-grace,
 *   30 s by default) the worker kills what is left. That is the bound on giving the machine back.
 * The Python helper `chatgpu.checkpoint` (worker/python/chatgpu/checkpoint.py) does all of this.
 *
 * The worker watches the folder while the program runs and uploads the checkpoint each time it
 * changed and then stayed the same for one poll (a file being written is not taken half-done),
 * so a worker that vanishes loses at most the work since the last checkpoint (plus one poll).
 */
import { readFileSync } from 'node:fs';
import { lstat, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { childrenOf } from './peakMemory.js';

export const DEFAULT_CHECKPOINT_PATH = 'checkpoint';
export const DEFAULT_DRAIN_GRACE_SEC = 30;
export const CHECKPOINT_POLL_MS = 1000;
export const CHECKPOINT_META = 'chatgpu-checkpoint.json';

/** The checkpoint folder of a task, relative to its run directory (a path that stays inside it). */
export function checkpointPath(req: { checkpoint?: { path?: unknown } | null } | null | undefined): string {
  const p = req?.checkpoint?.path;
  if (typeof p !== 'string') return DEFAULT_CHECKPOINT_PATH;
  const clean = path.posix
    .normalize(p)
    .replace(/^(\.\/)+/, '')
    .replace(/\/+$/, '');
  return !clean || clean === '.' || clean.startsWith('..') || path.posix.isAbsolute(clean) ? DEFAULT_CHECKPOINT_PATH : clean;
}

/** size:mtime of every regular file under `dir/rel` (no link followed), sorted; '' when there is none. */
async function signature(dir: string, rel: string): Promise<string> {
  const parts: string[] = [];
  const walk = async (r: string) => {
    for (const e of await readdir(path.join(dir, r), { withFileTypes: true }).catch(() => [])) {
      const p = `${r}/${e.name}`;
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) {
        const st = await lstat(path.join(dir, p)).catch(() => null);
        if (st) parts.push(`${p}:${st.size}:${st.mtimeMs}`);
      }
    }
  };
  await walk(rel);
  return parts.sort().join('\n');
}

/** The step the program wrote beside its checkpoint, or null. */
export async function checkpointStep(dir: string, rel: string): Promise<number | null> {
  try {
    const step = (JSON.parse(await readFile(path.join(dir, rel, CHECKPOINT_META), 'utf8')) as { step?: unknown }).step;
    return typeof step === 'number' && Number.isInteger(step) && step >= 0 ? step : null;
  } catch {
    return null;
  }
}

export interface SavedCheckpoint {
  files: { path: string; sha256: string; mode: number }[];
  step: number | null;
}

/**
 * Uploads the checkpoint folder when it changed: `poll()` while the program runs (only a folder
 * that stayed the same since the previous poll), `flush()` once it stopped (whatever is there).
 * One upload at a time; `latest` is the last one the API accepted.
 */
export class CheckpointWatcher {
  latest: SavedCheckpoint | null = null;
  private seen = '';
  private sent = '';
  private busy: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly opts: {
      dir: string;
      rel: string;
      /** uploads the files under `rel` of `root` (collectOutputs), returns their manifest */
      collect: (root: string) => Promise<SavedCheckpoint['files']>;
      /**
       * Copies the files under `rel` (as collectOutputs would take them) into a folder of the
       * worker's own and returns it; the upload reads the copy while the program saves on.
       */
      snapshot: () => Promise<string>;
      /** tells the API (saveCheckpoint) */
      save: (cp: SavedCheckpoint) => Promise<void>;
      note: (m: string) => void;
    },
  ) {}

  /**
   * What the folder holds when the program starts (files shipped with the code, or the restored
   * checkpoint of an earlier attempt) is not this attempt's checkpoint: only a change after it is.
   */
  async start(intervalMs = CHECKPOINT_POLL_MS): Promise<void> {
    // Read before the program starts (the caller awaits it): a save the program makes at once
    // is then a change, not mistaken for the starting state and never uploaded.
    this.busy = signature(this.opts.dir, this.opts.rel).then((sig) => {
      this.seen = this.sent = sig;
    });
    await this.busy;
    this.timer = setInterval(() => void this.poll(), intervalMs);
    this.timer.unref();
  }

  stop(): Promise<void> {
    clearInterval(this.timer);
    return this.busy;
  }

  poll(): Promise<void> {
    return this.run(false);
  }

  flush(): Promise<void> {
    return this.run(true);
  }

  private run(final: boolean): Promise<void> {
    this.busy = this.busy.then(async () => {
      const sig = await signature(this.opts.dir, this.opts.rel);
      const stable = final || sig === this.seen;
      this.seen = sig;
      if (!sig || !stable || sig === this.sent) return;
      try {
        // While the program runs, the upload reads a copy taken while the folder stood still (the
        // folder is checked again after the copy): a program that saves again during the upload —
        // uploads take seconds on a busy machine — neither mixes files of two saves nor labels older
        // files with a newer step, and one that saves more often than an upload takes still gets
        // its checkpoints uploaded. Once it stopped (final), the folder itself is read.
        let root = this.opts.dir;
        if (!final) {
          root = await this.opts.snapshot();
          const after = await signature(this.opts.dir, this.opts.rel);
          if (after !== sig) return void (this.seen = after);
        }
        const step = await checkpointStep(root, this.opts.rel);
        const files = await this.opts.collect(root);
        if (!files.length) return;
        const cp = { files, step };
        await this.opts.save(cp);
        this.sent = sig;
        this.latest = cp;
        this.opts.note(`worker: checkpoint uploaded (${files.length} file(s)${cp.step !== null ? `, step ${cp.step}` : ''}).`);
      } catch (err) {
        this.opts.note(`worker: checkpoint not uploaded: ${(err as Error).message}`);
      }
    });
    return this.busy;
  }
}

/**
 * The processes of the program a run started: `root` and everything below it, except the
 * worker's own wrappers (bwrap and its sandbox init, setpriv, prlimit) and shells (the `sh -c`
 * that runs the command line): a shell dies of SIGTERM at once, and with it the sandbox and the
 * program, before the program could checkpoint. Read from /proc; [] elsewhere.
 */
export function programProcesses(root: number): number[] {
  const all = [root];
  for (let i = 0; i < all.length; i++) all.push(...childrenOf(all[i]!));
  return all.filter((pid) => {
    try {
      return !WRAPPERS.has(readFileSync(`/proc/${pid}/comm`, 'utf8').trim());
    } catch {
      return false; // gone
    }
  });
}

const WRAPPERS = new Set(['bwrap', 'setpriv', 'prlimit', 'sh', 'dash', 'bash', 'zsh', 'busybox']);
