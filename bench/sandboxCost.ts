/**
 * The sandbox's own cost, alone: the same program started as a plain process and inside the
 * worker's sandbox exactly as the runner builds it (worker/src/sandbox.ts buildSandboxedCommand:
 * bwrap with its namespaces and binds, the seccomp filter on fd 3, prlimit --data and --nproc,
 * setpriv to an unprivileged uid), alternating plain/sandboxed so that other load hits both.
 *
 *   per task start:       `true`, `python -c pass` and `python -c "import torch"`, plain vs sandboxed, the
 *                         difference of the medians
 *   per second of run:    a CPU-bound NumPy loop, a system-call-heavy loop (small writes and stats),
 *                         a pure-Python loop and a small PyTorch training loop of ≈ --seconds each;
 *                         (sandboxed − plain − start) ÷ plain
 *
 *   node --import tsx bench/sandboxCost.ts [--trials 9] [--seconds 5] [--python /usr/bin/python3]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot } from './lib/api.js';
import { commandFor, isMain, parseOptions, runAsScript, startBench, type BenchResult } from './lib/bench.js';
import { quantile, round, wallMs } from './lib/stats.js';
import {
  buildSandboxedCommand,
  DEFAULT_PIDS_LIMIT,
  detectMemoryLimit,
  interpreterBinds,
  prepareMemoryLimit,
  sandboxPaths,
  spawnSandboxed,
  TASK_USER,
  writeIdentityFiles,
  type SandboxedCommand,
} from '../worker/src/sandbox.js';

const DEFAULTS = { trials: 9, seconds: 5, python: '/usr/bin/python3', memoryMib: 16384 };
const USAGE = 'usage: node --import tsx bench/sandboxCost.ts [--trials 9] [--seconds 5] [--python /usr/bin/python3] [--memory-mib 16384]';
const HELPERS = path.join(repoRoot, 'worker/python');

/** Programs of roughly `sec` seconds each on this machine (calibrated by their iteration count). */
const PROGRAMS = {
  numpy: (n: number) =>
    `import numpy as np\nm=np.random.default_rng(0).standard_normal((300,300))\nfor i in range(${n}): m=np.tanh(m@m.T/300.0)\n`,
  syscalls: (n: number) =>
    `import os\nf='f%d'%os.getpid()\nfd=os.open(f,os.O_CREAT|os.O_WRONLY)\nfor i in range(${n}):\n  os.pwrite(fd,b'x',0); os.stat(f)\nos.unlink(f)\n`,
  python: (n: number) => `s=0\nfor i in range(${n}): s+=i*i%7\n`,
  // The torch-classifier's inner loop (a small MLP, Adam, batches of 64): many small ops, one thread.
  torch: (n: number) =>
    `import torch\nfrom torch import nn\ntorch.manual_seed(0)\nm=nn.Sequential(nn.Linear(2,64),nn.ReLU(),nn.Linear(64,64),nn.ReLU(),nn.Linear(64,2))\n` +
    `opt=torch.optim.Adam(m.parameters(),lr=0.01)\nx=torch.randn(64,2)\ny=(x[:,0]>0).long()\nf=nn.CrossEntropyLoss()\n` +
    `for i in range(${n}):\n  opt.zero_grad(); l=f(m(x),y); l.backward(); opt.step()\n`,
};

interface Runner {
  plain(argv: string[]): SandboxedCommand;
  sandboxed(argv: string[]): SandboxedCommand;
  dir: string;
  close(): Promise<void>;
}

/** Builds plain and sandboxed commands the way the runner does, in a scratch attempt directory. */
async function runner(python: string, memoryMiB: number): Promise<Runner> {
  const dir = await mkdtemp(path.join(tmpdir(), 'sandbox-cost-'));
  const root = (process.getuid?.() ?? 1) === 0;
  const user = root ? TASK_USER : null;
  const identityFiles = writeIdentityFiles(path.join(dir, '.etc'), user ?? { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 });
  const { chmod } = await import('node:fs/promises');
  await chmod(dir, 0o777); // the task's uid writes here (the runner chowns the attempt dir instead)
  const memory = prepareMemoryLimit({ limitMiB: memoryMiB, strategy: 'auto', support: await detectMemoryLimit(), name: 'sandbox-cost' });
  const env = (sandbox: 'bwrap' | 'none') => ({
    PATH: '/usr/bin:/bin',
    HOME: sandboxPaths(sandbox, dir, HELPERS).workDir,
    LANG: 'C.UTF-8',
    PYTHONDONTWRITEBYTECODE: '1',
  });
  const binds = interpreterBinds(python).binds;
  return {
    dir,
    plain: (argv) => buildSandboxedCommand({ sandbox: 'none', command: argv, workDir: dir, env: env('none'), memory: null }),
    sandboxed: (argv) =>
      buildSandboxedCommand({
        sandbox: 'bwrap',
        command: argv,
        workDir: dir,
        env: env('bwrap'),
        helpersDir: HELPERS,
        readOnly: binds,
        memory,
        pidsLimit: DEFAULT_PIDS_LIMIT,
        runAs: user,
        identityFiles,
      }),
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

function timeIt(cmd: SandboxedCommand): Promise<number> {
  const t0 = wallMs();
  return new Promise((resolve, reject) => {
    const child = spawnSandboxed(cmd, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve(wallMs() - t0) : reject(new Error(`${cmd.file} exited ${code}: ${err.slice(-1000)}`)),
    );
  });
}

/** Alternating plain/sandboxed runs of argv; medians in ms. */
async function pairs(r: Runner, argv: string[], trials: number): Promise<{ plainMs: number; sandboxedMs: number; extraMs: number }> {
  const p: number[] = [];
  const s: number[] = [];
  for (let i = 0; i < trials; i++) {
    if (i % 2 === 0) {
      p.push(await timeIt(r.plain(argv)));
      s.push(await timeIt(r.sandboxed(argv)));
    } else {
      s.push(await timeIt(r.sandboxed(argv)));
      p.push(await timeIt(r.plain(argv)));
    }
  }
  const plainMs = quantile(p, 0.5);
  const sandboxedMs = quantile(s, 0.5);
  return { plainMs, sandboxedMs, extraMs: sandboxedMs - plainMs };
}

/** The extra time a task start costs in the sandbox (`python -c pass`), for bench/overhead.ts. */
export async function sandboxStartCost(o: {
  python: string;
  trials: number;
  memoryMiB?: number;
}): Promise<{ plainMs: number; sandboxedMs: number; extraMs: number }> {
  const r = await runner(o.python, o.memoryMiB ?? DEFAULTS.memoryMib);
  try {
    return await pairs(r, [o.python, '-c', 'pass'], o.trials);
  } finally {
    await r.close();
  }
}

export async function sandboxCost(argv: string[]): Promise<BenchResult> {
  const o = parseOptions(argv, DEFAULTS, USAGE);
  const { machine, startedAt } = await startBench("sandboxCost (the same program plain and in the worker's sandbox, alternating)", o.pg);
  const r = await runner(o.python, o.memoryMib);
  const figures: Record<string, number | string | null> = {};
  try {
    const tr = await pairs(r, ['true'], o.trials);
    const start = await pairs(r, [o.python, '-c', 'pass'], o.trials);
    console.log(
      `  start, true:               plain ${round(tr.plainMs, 1)} ms, sandboxed ${round(tr.sandboxedMs, 1)} ms: +${round(tr.extraMs, 1)} ms`,
    );
    console.log(
      `  start, python -c pass:     plain ${round(start.plainMs, 1)} ms, sandboxed ${round(start.sandboxedMs, 1)} ms: +${round(start.extraMs, 1)} ms`,
    );
    figures['start: true, extra (ms)'] = round(tr.extraMs, 1);
    figures['start: python -c pass, extra (ms)'] = round(start.extraMs, 1);
    // A heavy import (≈ 1,000 files opened and mapped): whether the sandbox's mounts or filter cost per file.
    const torch = await pairs(r, [o.python, '-c', 'import torch'], o.trials).catch(() => null);
    if (torch) {
      console.log(
        `  start, import torch:       plain ${round(torch.plainMs, 1)} ms, sandboxed ${round(torch.sandboxedMs, 1)} ms: +${round(torch.extraMs, 1)} ms`,
      );
      figures['start: python -c "import torch", extra (ms)'] = round(torch.extraMs, 1);
    }
    for (const [name, make] of Object.entries(PROGRAMS)) {
      if (name === 'torch' && !torch) continue; // no torch for this interpreter
      // Calibrate: scale the iteration count until a plain run takes about `seconds`.
      let n = 1000;
      const file = path.join(r.dir, `prog_${name}.py`);
      const { writeFile } = await import('node:fs/promises');
      for (;;) {
        await writeFile(file, make(n));
        const ms = await timeIt(r.plain([o.python, `prog_${name}.py`]));
        if (ms > 400 || n > 1e9) {
          n = Math.max(1, Math.round((n * o.seconds * 1000) / ms));
          break;
        }
        n *= 8;
      }
      await writeFile(file, make(n));
      const x = await pairs(r, [o.python, `prog_${name}.py`], Math.max(3, Math.ceil(o.trials / 3)));
      // The start's own extra (an import of torch for the torch loop) is taken off.
      const startExtra = name === 'torch' && torch ? torch.extraMs : start.extraMs;
      const perSec = ((x.extraMs - startExtra) / x.plainMs) * 100;
      console.log(
        `  run, ${name.padEnd(9)} ${String(n).padStart(10)} its: plain ${round(x.plainMs / 1000, 2)} s, sandboxed ${round(x.sandboxedMs / 1000, 2)} s: ${perSec >= 0 ? '+' : ''}${round(perSec, 2)} % a second of run (start cost taken off)`,
      );
      figures[`run: ${name}, extra % of run time`] = round(perSec, 2);
    }
  } finally {
    await r.close();
  }
  return {
    name: 'sandboxCost',
    command: commandFor('sandboxCost', o, { ...DEFAULTS, pg: o.pg }),
    machine,
    options: o,
    startedAt: startedAt.toISOString(),
    durationSec: round((Date.now() - startedAt.getTime()) / 1000),
    headline: `+${figures['start: python -c pass, extra (ms)']} ms a task start; run: numpy ${figures['run: numpy, extra % of run time']} %, syscalls ${figures['run: syscalls, extra % of run time']} %, python ${figures['run: python, extra % of run time']} %, torch ${figures['run: torch, extra % of run time'] ?? '—'} % a second`,
    figures,
  };
}

if (isMain(import.meta)) runAsScript(sandboxCost);
