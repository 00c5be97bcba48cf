/**
 * What a worker reports about its machine at `workerHello` (docs/architecture.md §3, §5). The API takes
 * `Capabilities` as JSON, so every field is plain data and `null` (never `undefined`) means "unknown".
 */

import type { NetworkPolicy } from '../downloadCache.js';
import type { SimulatedAccelerator } from './simulateAccelerator.js';

export interface Accelerator {
  vendor: 'nvidia' | 'amd' | 'apple';
  index: number;
  name: string;
  memoryMiB: number | null;
  driver: string | null;
  /** 'cuda 12.2' | 'rocm 6.0' | 'mps' */
  runtime: string | null;
  /** 'sm_89' | 'gfx1030' | 'apple-m2' */
  arch: string | null;
  /** --simulate-accelerator: advertised for scheduling; the numerics run on the CPU. */
  simulated?: boolean;
}

export interface PythonRuntime {
  path: string;
  version: string;
  torch: {
    version: string;
    cuda: string | null;
    hip: string | null;
    cudaAvailable: boolean;
    mpsAvailable: boolean;
    deviceCount: number;
  } | null;
  numpy: string | null;
  /** Sorted top-level modules that installed distributions provide (standard library excluded), ≤ 2000. */
  modules: string[];
}

export type Workload = 'python' | 'torch-cpu' | 'torch-cuda' | 'torch-rocm' | 'torch-mps' | 'cuda-cxx' | 'hip-cxx' | 'shell';

export interface Capabilities {
  os: string;
  arch: string;
  hostname: string;
  cpu: { model: string; cores: number };
  memoryMiB: number;
  /** --memory-limit: the most one task may use (the API places by it, not by the machine's RAM); absent: no limit. */
  taskMemoryLimitMiB?: number;
  diskFreeMiB: number;
  accelerators: Accelerator[];
  pythons: PythonRuntime[];
  /** chosen interpreter path */
  python: string | null;
  toolchains: { nvcc: string | null; hipcc: string | null };
  workloads: Workload[];
  /** What every task of this worker runs in (sandbox.ts `resolveSandbox`, decided once at start-up). */
  sandbox: 'bwrap' | 'none';
  /** No sandbox and `--sandbox own-jobs`: the worker takes only its owner's own jobs (the claim reads
   *  this). Absent with sandbox 'none': its owner chose `--sandbox none` for everyone's tasks. */
  ownJobsOnly?: boolean;
  /** Why there is no sandbox (sandbox 'none'), for the Workers page. */
  sandboxReason?: string;
  /**
   * The setup phase (setupEnv.ts): `enabled` when the chosen Python can make a virtualenv with pip and
   * the owner did not pass --no-install; `index` is where pip installs from (--pip-index-url, else
   * pip's own configuration; null: pip's default), without any credentials it holds.
   */
  install: { enabled: boolean; index: string | null };
  /** The owner's `--allow-network` (downloadCache.ts networkFor enforces it): the claim gives a task that
   *  needs the network only to a worker whose policy allows it. Absent (older workers): downloads. */
  allowNetwork?: NetworkPolicy;
  probeErrors: string[];
  /** --simulate-accelerator (tests and demos only; see simulateAccelerator.ts). Absent: real hardware. */
  simulatedAccelerator?: SimulatedAccelerator | null;
}

/**
 * The outcome of running one external command. `error` is set when the command could not run to an
 * exit status: 'not found' (ENOENT), 'timeout', or another spawn failure; `code` is then null.
 */
export interface ExecResult {
  code: number | null;
  stdout: string;
  stderr: string;
  error: string | null;
}

export interface ExecOptions {
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
}

/** Runs `file` with `args` (no shell). Must never reject: failures come back in the result. */
export type ExecFn = (file: string, args: string[], opts: ExecOptions) => Promise<ExecResult>;
