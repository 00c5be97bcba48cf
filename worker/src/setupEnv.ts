/**
 * The setup phase: before a task whose requirements carry `setup: { pip: [...] }` runs, a virtualenv
 * with those packages, made from the worker's Python and cached across tasks.
 *
 *   envs/<hash>/        the virtualenv (`python -m venv --system-site-packages`): the machine's own
 *                       torch/CUDA build stays visible and is reused, never replaced
 *   envs/<hash>.json    the env's record, written (tmp + rename) only once the env is complete: an env
 *                       without it is never used, and is removed before a rebuild or by eviction
 *   envs/<hash>.setup/  the setup's working directory (requirements.txt, constraints.txt), bound at /task
 *
 * hash = sha256 of (base interpreter's realpath, sorted requirement lines, constraints, index URL).
 * The constraints pin every distribution installed in the base interpreter to its installed version,
 * so a requirement can never upgrade or replace torch or numpy: pip fails instead, and that failure is
 * the answer (error class DEPENDENCY, with pip's last lines).
 *
 * Steps: inspect the base interpreter on the host (`python -I`: the owner's interpreter, no package's
 * code runs; like the probe), then inside the sandbox — the same isolation as a task, because pip may
 * run an sdist's setup.py — but with the network shared and the env directory writable, nothing else
 * of the host: `python -m venv …` and `ENV/bin/python -m pip install --no-input … -r … -c …`. The
 * finished env is then owned by the worker's user, so no later task or setup (uid 65534) can write it;
 * runs bind it read-only and put its bin/ first on PATH.
 *
 * Concurrency: one worker process per data directory (its control socket lives there); within it one
 * build per hash at a time (other attempts wait for it, then reuse it). Short critical sections —
 * reuse-and-acquire, mark complete, evict — run one at a time, so an env is never removed between
 * being found and being marked in use. Cache: the recorded sizes stay ≤ maxBytes by removing the
 * least recently used envs that no run is using, whole (record first, then the directory).
 */
import { createHash } from 'node:crypto';
import { chmod, chown, lstat, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { chownTree } from './chownTree.js';
import { describeFailure, execCommand } from './probe/execCommand.js';
import { redactUrl } from './probe/probeCapabilities.js';
import { PIP_INSTALL_SNIPPET, pipHasResolver } from './probe/pythonProbe.js';
import type { ExecFn } from './probe/types.js';
import { buildSandboxedCommand, interpreterBinds, sandboxPaths, spawnSandboxed, type MemoryLimitPlan } from './sandbox.js';

export const DEFAULT_ENV_CACHE_MB = 10_240;
/** A setup that takes longer than this (a hung index, a build without end) fails. */
export const DEFAULT_SETUP_TIMEOUT_MS = 30 * 60_000;
const HASH_LEN = 16;

export interface SetupSandbox {
  sandbox: 'bwrap' | 'none';
  runAs: { uid: number; gid: number } | null;
  identityFiles: { passwd: string; group: string } | null;
  memory: MemoryLimitPlan | null;
  pidsLimit: number | null;
  bwrap?: string;
}

export interface SetupRequest {
  /** the base interpreter (the probe's chosen Python) */
  python: string;
  /** requirement lines, as in a requirements.txt */
  pip: string[];
  attemptId: string;
  sandbox: SetupSandbox;
  /** one system line of the attempt's log */
  log: (line: string) => void;
  signal: AbortSignal;
}

export interface PreparedEnv {
  hash: string;
  dir: string;
  bin: string;
  python: string;
  /** The run is over: the env may be evicted again. Idempotent. */
  release(): void;
}

export type SetupResult = { ok: true; env: PreparedEnv } | { ok: false; aborted: boolean; message: string };

interface EnvRecord {
  hash: string;
  python: string;
  lines: string[];
  /** without credentials */
  index: string | null;
  created: string;
  lastUsed: string;
  sizeBytes: number;
  builtBy: string;
}

interface BaseInfo {
  realpath: string;
  constraints: string[];
  install: { venv: boolean; pip: string | null; ensurepip: boolean; index: string | null; reason: string | null };
}

/**
 * Inspects the base interpreter: every installed distribution (the first of each name on sys.path,
 * the one `import` finds) pinned to its version — versions pip cannot parse are left out, pip would
 * refuse the whole file — and what PIP_INSTALL_SNIPPET finds (venv, pip, index).
 */
const BASE_SCRIPT =
  String.raw`
import sys, os, json, re
out = {"realpath": os.path.realpath(sys.executable), "constraints": [],
       "install": {"venv": False, "pip": None, "ensurepip": False, "index": None, "reason": None}}
from importlib import metadata as md
try:
    try:
        from packaging.version import Version
    except ImportError:
        from pip._vendor.packaging.version import Version
except ImportError:
    Version = None
seen = set()
for d in md.distributions():
    name = d.metadata["Name"]
    if not name:
        continue
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in seen:
        continue
    seen.add(key)
    if Version is not None:
        try:
            Version(d.version)
        except Exception:
            continue
    out["constraints"].append("%s==%s" % (key, d.version))
out["constraints"].sort()
` +
  PIP_INSTALL_SNIPPET +
  String.raw`
sys.stdout.write("CHATGPU_BASE " + json.dumps(out) + "\n")
`;

const NAME = String.raw`[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?`;
const VERSION_CLAUSE = String.raw`(?:~=|===|==|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+`;
const REQUIREMENT = new RegExp(
  String.raw`^${NAME}\s*(?:\[\s*${NAME}(?:\s*,\s*${NAME})*\s*\])?\s*(?:\(?\s*${VERSION_CLAUSE}(?:\s*,\s*${VERSION_CLAUSE})*\s*\)?)?\s*(?:;[\w\s.'"<>=!~(),-]+)?$`,
);

/**
 * The requirement lines pip gets: a name, extras, version clauses and an environment marker — never
 * an option (`--index-url`, `-e`, `-r`), a URL or a path, which would let a task choose where pip
 * fetches from or what it runs. Comments and blank lines are dropped; the result is sorted and unique.
 */
export function parseRequirementLines(lines: string[]): { lines: string[] } | { error: string } {
  const out = new Set<string>();
  for (const raw of lines) {
    if (/[\r\n\0]/.test(raw)) return { error: `requirement line ${JSON.stringify(raw)} spans lines` };
    const line = raw.replace(/(^|\s)#.*$/, '').trim();
    if (!line) continue;
    if (line.length > 300) return { error: `requirement line too long (${line.length} characters)` };
    if (!REQUIREMENT.test(line)) {
      return {
        error: `not a requirement this worker installs: ${JSON.stringify(line)} (only "name[extras] <version clauses> [; marker]"; no options, URLs or paths)`,
      };
    }
    out.add(line);
  }
  if (out.size === 0) return { error: 'no requirement lines' };
  if (out.size > 200) return { error: `too many requirement lines (${out.size} > 200)` };
  return { lines: [...out].sort() };
}

export function envHash(parts: { python: string; lines: string[]; constraints: string[]; index: string | null }): string {
  const key = JSON.stringify({
    v: 1,
    python: parts.python,
    lines: [...parts.lines].sort(),
    constraints: parts.constraints,
    index: parts.index ?? '',
  });
  return createHash('sha256').update(key).digest('hex').slice(0, HASH_LEN);
}

export interface EnvCacheOptions {
  /** the worker's data directory: envs live in DATA/envs */
  dataDir: string;
  /** --env-cache-mb, in bytes */
  maxBytes: number;
  /** --pip-index-url; null: pip's own configuration, read at each setup */
  indexUrl: string | null;
  timeoutMs?: number;
  log: { info(m: string): void; warn(m: string): void };
  exec?: ExecFn;
  now?: () => Date;
}

export class EnvCache {
  readonly root: string;
  private readonly building = new Map<string, { attemptId: string; done: Promise<SetupResult> }>();
  private readonly inUse = new Map<string, number>();
  private serial: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: EnvCacheOptions) {
    this.root = path.join(opts.dataDir, 'envs');
  }

  private now(): Date {
    return this.opts.now?.() ?? new Date();
  }

  /** Runs `fn` after every earlier critical section has finished. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.serial.then(fn, fn);
    this.serial = p.catch(() => {});
    return p;
  }

  /** Finds or builds the env for `req` and marks it in use; never throws. */
  async setup(req: SetupRequest): Promise<SetupResult> {
    const started = performance.now();
    const secs = () => ((performance.now() - started) / 1000).toFixed(1);
    const parsed = parseRequirementLines(req.pip);
    if ('error' in parsed) return { ok: false, aborted: false, message: parsed.error };
    const exec = this.opts.exec ?? execCommand;
    const r = await exec(req.python, ['-I', '-c', BASE_SCRIPT], { timeoutMs: 120_000 });
    const line = r.stdout.split('\n').find((l) => l.startsWith('CHATGPU_BASE '));
    let base: BaseInfo;
    try {
      base = JSON.parse(line!.slice('CHATGPU_BASE '.length)) as BaseInfo;
    } catch {
      return { ok: false, aborted: false, message: `cannot inspect ${req.python}: ${describeFailure(req.python, r)}` };
    }
    const usePip = pipHasResolver(base.install.pip);
    if (!base.install.venv || !(usePip || base.install.ensurepip)) {
      return {
        ok: false,
        aborted: false,
        message: `${req.python} cannot make a virtualenv with pip (${base.install.reason ?? 'no pip ≥ 20.3 and no ensurepip'})`,
      };
    }
    const index = this.opts.indexUrl ?? base.install.index;
    const hash = envHash({ python: base.realpath, lines: parsed.lines, constraints: base.constraints, index });
    const h8 = hash.slice(0, 8);
    await mkdir(this.root, { recursive: true });

    for (;;) {
      if (req.signal.aborted) return { ok: false, aborted: true, message: 'setup stopped' };
      const reused = await this.exclusive(() => this.acquireComplete(hash));
      if (reused) {
        req.log(`worker: reusing environment ${h8} (created ${reused.created}) in ${secs()}s`);
        return { ok: true, env: this.handle(hash) };
      }
      const other = this.building.get(hash);
      if (other) {
        req.log(`worker: waiting for environment ${h8}, which attempt ${other.attemptId} is creating`);
        const res = await Promise.race([other.done, abortPromise(req.signal)]);
        if (!res) return { ok: false, aborted: true, message: 'setup stopped' };
        if (!res.ok && !res.aborted)
          return {
            ok: false,
            aborted: false,
            message: `environment ${h8} could not be created (attempt ${other.attemptId}): ${res.message}`,
          };
        continue; // built (reuse it) or its attempt was stopped (build it here)
      }
      const done = this.build(hash, base, parsed.lines, index, usePip, req, secs);
      this.building.set(hash, { attemptId: req.attemptId, done });
      const res = await done.finally(() => this.building.delete(hash));
      void this.evict().catch((err) => this.opts.log.warn(`environment cache: ${(err as Error).message}`));
      return res;
    }
  }

  /** A complete env's record, marked used now and in use by one more run; null when there is none. */
  private async acquireComplete(hash: string): Promise<EnvRecord | null> {
    const rec = await this.readRecord(hash);
    if (!rec) return null;
    if (
      !(await stat(path.join(this.root, hash, 'bin', 'python')).then(
        () => true,
        () => false,
      ))
    )
      return null;
    this.inUse.set(hash, (this.inUse.get(hash) ?? 0) + 1);
    await this.writeRecord({ ...rec, lastUsed: this.now().toISOString() });
    return rec;
  }

  private handle(hash: string): PreparedEnv {
    const dir = path.join(this.root, hash);
    let released = false;
    return {
      hash,
      dir,
      bin: path.join(dir, 'bin'),
      python: path.join(dir, 'bin', 'python'),
      release: () => {
        if (released) return;
        released = true;
        const n = (this.inUse.get(hash) ?? 1) - 1;
        if (n > 0) this.inUse.set(hash, n);
        else this.inUse.delete(hash);
        void this.evict().catch((err) => this.opts.log.warn(`environment cache: ${(err as Error).message}`));
      },
    };
  }

  private async build(
    hash: string,
    base: BaseInfo,
    lines: string[],
    index: string | null,
    usePip: boolean,
    req: SetupRequest,
    secs: () => string,
  ): Promise<SetupResult> {
    const dir = path.join(this.root, hash);
    const work = `${dir}.setup`;
    const fail = async (aborted: boolean, message: string): Promise<SetupResult> => {
      await rm(dir, { recursive: true, force: true });
      await rm(work, { recursive: true, force: true });
      return { ok: false, aborted, message };
    };
    try {
      await rm(`${dir}.json`, { force: true });
      await rm(dir, { recursive: true, force: true });
      await rm(work, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      await mkdir(path.join(work, 'home'), { recursive: true });
      await writeFile(path.join(work, 'requirements.txt'), `${lines.join('\n')}\n`);
      await writeFile(path.join(work, 'constraints.txt'), `${base.constraints.join('\n')}\n`);
      // Readable and enterable by the task's uid whatever the owner's umask; writable by the setup's.
      await chmod(dir, 0o755);
      await chmod(work, 0o755);
      const runAs = req.sandbox.sandbox === 'bwrap' ? req.sandbox.runAs : null;
      if (runAs) {
        await chown(dir, runAs.uid, runAs.gid);
        await chownTree(path.join(work, 'home'), runAs.uid, runAs.gid);
      }
      const inTask = sandboxPaths(req.sandbox.sandbox, work, '').workDir;
      req.log(
        `worker: creating environment ${hash.slice(0, 8)} for ${lines.join(', ')} (from ${redactUrl(index) ?? "pip's default index"}; the installed packages pinned; network during setup only)`,
      );
      const steps: { label: string; command: string[] }[] = [
        {
          label: 'python -m venv',
          command: [req.python, '-m', 'venv', '--system-site-packages', ...(usePip ? ['--without-pip'] : []), dir],
        },
        {
          label: 'pip install',
          command: [
            path.join(dir, 'bin', 'python'),
            '-m',
            'pip',
            'install',
            '--no-input',
            '--disable-pip-version-check',
            '--no-cache-dir',
            '--progress-bar',
            'off',
            '-r',
            `${inTask}/requirements.txt`,
            '-c',
            `${inTask}/constraints.txt`,
            ...(index ? ['--index-url', index] : []),
          ],
        },
      ];
      const deadline = Date.now() + (this.opts.timeoutMs ?? DEFAULT_SETUP_TIMEOUT_MS);
      for (const step of steps) {
        const res = await this.runStep(step.command, { dir, work, inTask, req, deadline });
        if (res.aborted) return await fail(true, 'setup stopped');
        if (res.timedOut)
          return await fail(
            false,
            `setup timed out after ${Math.round((this.opts.timeoutMs ?? DEFAULT_SETUP_TIMEOUT_MS) / 1000)}s during ${step.label}${res.tail ? `: ${res.tail}` : ''}`,
          );
        if (res.code !== 0)
          return await fail(
            false,
            `${step.label} failed (${res.signal ? `signal ${res.signal}` : `exit code ${res.code}`})${res.tail ? `: ${res.tail}` : ''}`,
          );
      }
      // From now on only the worker's user can change it: runs (and other setups) are uid 65534.
      if (runAs) await chownTree(dir, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
      await rm(work, { recursive: true, force: true });
      const now = this.now().toISOString();
      const rec: EnvRecord = {
        hash,
        python: base.realpath,
        lines,
        index: redactUrl(index),
        created: now,
        lastUsed: now,
        sizeBytes: await treeSize(dir),
        builtBy: req.attemptId,
      };
      await this.exclusive(async () => {
        await this.writeRecord(rec);
        this.inUse.set(hash, (this.inUse.get(hash) ?? 0) + 1);
      });
      req.log(`worker: environment ${hash.slice(0, 8)} created in ${secs()}s (${formatSize(rec.sizeBytes)})`);
      return { ok: true, env: this.handle(hash) };
    } catch (err) {
      return await fail(req.signal.aborted, `setup failed: ${(err as Error).message}`);
    }
  }

  /** One sandboxed step with the network and the env writable; its output becomes `setup: …` lines. */
  private async runStep(
    command: string[],
    o: { dir: string; work: string; inTask: string; req: SetupRequest; deadline: number },
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null; tail: string; timedOut: boolean; aborted: boolean }> {
    const { req } = o;
    const s = req.sandbox;
    const cmd = buildSandboxedCommand({
      sandbox: s.sandbox,
      // umask 022: whatever the owner's umask, the env must be readable by the task's uid.
      command: ['/bin/sh', '-c', 'umask 022 && exec "$@"', 'chatgpu-setup', ...command],
      workDir: o.work,
      env: {
        PATH: `${o.dir}/bin:/usr/local/bin:/usr/bin:/bin`,
        HOME: `${o.inTask}/home`,
        LANG: 'C.UTF-8',
        PYTHONUNBUFFERED: '1',
        // None of the owner's pip configuration (none is visible in the sandbox anyway): the index is explicit.
        PIP_CONFIG_FILE: '/dev/null',
        PIP_NO_INPUT: '1',
      },
      readOnly: interpreterBinds(req.python, [this.opts.dataDir, homedir()]).binds,
      writable: [o.dir],
      allowNetwork: true,
      memory: s.memory,
      pidsLimit: s.pidsLimit,
      runAs: s.runAs,
      identityFiles: s.identityFiles,
      ...(s.bwrap ? { bwrap: s.bwrap } : {}),
    });
    const child = spawnSandboxed(cmd, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const tail: string[] = [];
    const onLine = (l: string) => {
      const text = l.replace(/\r$/, '');
      req.log(`setup: ${text}`);
      if (text.trim()) tail.push(text.trim());
      if (tail.length > 12) tail.shift();
    };
    const readers = [child.stdout!, child.stderr!].map(
      (st) => new Promise<void>((resolve) => createInterface({ input: st, crlfDelay: Infinity }).on('line', onLine).on('close', resolve)),
    );
    let timedOut = false;
    let aborted = false;
    const kill = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    };
    const timer = setTimeout(
      () => {
        timedOut = true;
        kill();
      },
      Math.max(0, o.deadline - Date.now()),
    );
    const onAbort = () => {
      aborted = true;
      kill();
    };
    req.signal.addEventListener('abort', onAbort, { once: true });
    if (req.signal.aborted) onAbort();
    try {
      const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
        child.once('error', reject);
        child.once('close', (c, sg) => resolve({ code: c, signal: sg }));
      });
      await Promise.all(readers);
      return { code, signal, tail: failureText(tail), timedOut, aborted };
    } finally {
      clearTimeout(timer);
      req.signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Removes leftovers (an env or setup directory without a record, from a build that was interrupted)
   * and then, while the recorded sizes exceed the limit, the least recently used env no run is using.
   */
  evict(): Promise<void> {
    return this.exclusive(async () => {
      const names = await readdir(this.root).catch(() => [] as string[]);
      const records: EnvRecord[] = [];
      for (const n of names) {
        const m = /^([0-9a-f]{16})(\.setup|\.json|\.json\.tmp-.*)?$/.exec(n);
        if (!m || this.building.has(m[1]!)) continue;
        if (m[2] === '.json') {
          const rec = await this.readRecord(m[1]!);
          if (rec) records.push(rec);
          else if (!this.inUse.has(m[1]!)) {
            // unreadable: the env it describes cannot be trusted to be complete
            await rm(path.join(this.root, n), { force: true });
            await rm(path.join(this.root, m[1]!), { recursive: true, force: true });
          }
        } else if (m[2] === undefined ? !names.includes(`${n}.json`) : m[2] !== '.json') {
          await rm(path.join(this.root, n), { recursive: true, force: true });
        }
      }
      let total = records.reduce((t, r) => t + r.sizeBytes, 0);
      for (const r of records.sort((a, b) => (a.lastUsed < b.lastUsed ? -1 : a.lastUsed > b.lastUsed ? 1 : 0))) {
        if (total <= this.opts.maxBytes) break;
        if (this.inUse.has(r.hash)) continue;
        await rm(path.join(this.root, `${r.hash}.json`), { force: true });
        await rm(path.join(this.root, r.hash), { recursive: true, force: true });
        total -= r.sizeBytes;
        this.opts.log.info(
          `evicted environment ${r.hash.slice(0, 8)} (${formatSize(r.sizeBytes)}, last used ${r.lastUsed}): the environment cache is limited to ${Math.round(this.opts.maxBytes / 2 ** 20)} MB`,
        );
      }
    });
  }

  private async readRecord(hash: string): Promise<EnvRecord | null> {
    try {
      const r = JSON.parse(await readFile(path.join(this.root, `${hash}.json`), 'utf8')) as EnvRecord;
      return r && r.hash === hash && typeof r.sizeBytes === 'number' && typeof r.lastUsed === 'string' ? r : null;
    } catch {
      return null;
    }
  }

  private async writeRecord(rec: EnvRecord): Promise<void> {
    const file = path.join(this.root, `${rec.hash}.json`);
    const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
    await writeFile(tmp, `${JSON.stringify(rec, null, 2)}\n`);
    await rename(tmp, file);
  }
}

function abortPromise(signal: AbortSignal): Promise<null> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(null);
    else signal.addEventListener('abort', () => resolve(null), { once: true });
  });
}

/** pip's last lines (its ERROR lines come last), for the attempt's error message. */
/**
 * What a failed setup step said, for the task's error: pip's own `ERROR:` lines when it printed
 * some (its retry WARNINGs before them are noise), with one sentence when those retries show the
 * package index could not be reached; otherwise the last lines. At most 2,000 characters.
 */
export function failureText(lines: string[]): string {
  const errors = [...new Set(lines.filter((l) => l.startsWith('ERROR:')))];
  const unreachable = lines.some((l) =>
    /Failed to establish a new connection|Name or service not known|Temporary failure in name resolution|Network is unreachable/.test(l),
  );
  const picked = errors.length
    ? [...errors, ...(unreachable ? ['(the package index could not be reached from this worker)'] : [])]
    : lines.slice(-8);
  const text = picked.join('\n');
  return text.length > 2000 ? `…${text.slice(-2000)}` : text;
}

function formatSize(bytes: number): string {
  return bytes < 2 ** 20 ? `${Math.max(1, Math.round(bytes / 1024))} KB` : `${(bytes / 2 ** 20).toFixed(1)} MB`;
}

async function treeSize(dir: string): Promise<number> {
  let total = 0;
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += await treeSize(p);
    else total += (await lstat(p)).size;
  }
  return total;
}
