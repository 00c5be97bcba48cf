import { statfs } from 'node:fs/promises';
import * as os from 'node:os';
import { dirname, resolve } from 'node:path';
import { choosePython } from './choosePython.js';
import { deriveWorkloads } from './deriveWorkloads.js';
import { describeFailure, execCommand } from './execCommand.js';
import type { AmdGpu, NvidiaSmiResult } from './gpuTypes.js';
import { archFromComputeCap } from './nvidiaArch.js';
import { normalizeGfx } from './amdArch.js';
import { NVIDIA_QUERY_FIELDS, NVIDIA_QUERY_FIELDS_OLD, parseNvidiaSmiCsv } from './parseNvidiaSmiCsv.js';
import { parseNvidiaSmiTable } from './parseNvidiaSmiTable.js';
import { parseNvidiaSmiXml } from './parseNvidiaSmiXml.js';
import { parseRocminfo } from './parseRocminfo.js';
import { parseRocmSmi } from './parseRocmSmi.js';
import { parseAmdSmi } from './parseAmdSmi.js';
import { sysctlInfo, type SysctlInfo } from './parseSysctl.js';
import { pythonCandidates } from './pythonCandidates.js';
import { canInstall, probePython, type PythonProbe } from './pythonProbe.js';
import { probeToolchains } from './toolchains.js';
import type { Accelerator, Capabilities, ExecFn } from './types.js';
import { DEFAULT_NETWORK_POLICY, type NetworkPolicy } from '../downloadCache.js';

export interface ProbeOptions {
  /** `--python PATH`: probe only this interpreter */
  python?: string;
  /** the worker's data directory: its file system's free space is reported */
  dataDir: string;
  /** injectable for tests; defaults to running the real tools */
  exec?: ExecFn;
  /** per command; default 20 s (a cold `import torch` takes ~1.3 s, a wedged nvidia-smi forever) */
  timeoutMs?: number;
  /** The sandbox the runner uses, decided once at start-up (sandbox.ts `resolveSandbox`): advertised
   *  as it is, never detected again here, so what the worker says is what its tasks get. */
  sandbox: Pick<Capabilities, 'sandbox' | 'ownJobsOnly' | 'sandboxReason'>;
  /** false with `--no-install`: the worker runs no setup phase (default true) */
  install?: boolean;
  /** `--allow-network` (default downloads): advertised as it is, so the claim places by what the runner enforces */
  allowNetwork?: NetworkPolicy;
  /** `--pip-index-url`: reported instead of pip's configured index */
  pipIndexUrl?: string | null;
  /** for tests: the environment searched for Python (PATH, CONDA_PREFIX…) and the host's identity */
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  cpuArch?: string;
}

/**
 * Probes this machine: CPU, memory, disk, GPUs (NVIDIA, AMD, Apple), Python interpreters with their
 * PyTorch, compilers, sandbox. Independent probes run concurrently. Never throws: whatever fails is
 * left empty and explained in `probeErrors`.
 */
export async function probeCapabilities(opts: ProbeOptions): Promise<Capabilities> {
  const exec = opts.exec ?? execCommand;
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const platform = opts.platform ?? process.platform;
  const cpuArch = opts.cpuArch ?? process.arch;
  const errors: string[] = [];
  const guard = async <T>(label: string, fallback: T, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      errors.push(`${label}: ${(err as Error).message}`);
      return fallback;
    }
  };

  const [nvidia, amd, apple, pythons, toolchains, diskFreeMiB] = await Promise.all([
    guard('nvidia', [], () => probeNvidia(exec, timeoutMs, errors)),
    guard('amd', [], () => probeAmd(exec, timeoutMs, errors)),
    platform === 'darwin' ? guard('sysctl', null, () => probeSysctl(exec, timeoutMs, errors)) : Promise.resolve(null),
    guard('python', [], () => probePythons(opts, exec, timeoutMs, errors)),
    guard('toolchains', { nvcc: null, hipcc: null, errors: [] }, () => probeToolchains(exec, timeoutMs, opts.env)),
    guard('disk', 0, () => diskFree(opts.dataDir)),
  ]);
  errors.push(...toolchains.errors);

  const runtimes = pythons.map((p) => p.runtime);
  const chosenPath = choosePython(runtimes);
  const chosen = pythons.find((p) => p.runtime.path === chosenPath) ?? null;

  const accelerators: Accelerator[] = [...nvidia];
  const hip = chosen?.runtime.torch?.hip ?? null;
  const rocmRuntime = hip ? `rocm ${majorMinor(hip)}` : toolchains.hipcc ? `rocm ${majorMinor(toolchains.hipcc)}` : null;
  for (const g of amd) {
    accelerators.push({
      vendor: 'amd',
      index: g.index,
      name: g.name ?? 'AMD GPU',
      memoryMiB: g.memoryMiB,
      driver: g.driver,
      runtime: rocmRuntime,
      arch: g.arch,
    });
  }
  const appleArch = apple?.appleArch ?? null;
  if (platform === 'darwin' && (appleArch || cpuArch === 'arm64')) {
    accelerators.push({
      vendor: 'apple',
      index: 0,
      name: apple?.cpuBrand ?? 'Apple silicon',
      memoryMiB: apple?.memoryMiB ?? Math.round(os.totalmem() / 2 ** 20), // unified memory
      driver: null,
      runtime: chosen?.runtime.torch?.mpsAvailable ? 'mps' : null,
      arch: appleArch,
    });
  }
  if (chosen) enrichFromTorch(accelerators, chosen, errors);

  const cpus = os.cpus();
  const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : cpus.length;
  return {
    os: platform,
    arch: cpuArch,
    hostname: os.hostname(),
    cpu: { model: apple?.cpuBrand ?? cpus[0]?.model?.trim() ?? 'unknown', cores: Math.max(1, cores) },
    memoryMiB: apple?.memoryMiB ?? Math.round(os.totalmem() / 2 ** 20),
    diskFreeMiB,
    accelerators,
    pythons: runtimes,
    python: chosenPath,
    toolchains: { nvcc: toolchains.nvcc, hipcc: toolchains.hipcc },
    workloads: deriveWorkloads({
      accelerators,
      python: chosen?.runtime ?? null,
      nvcc: toolchains.nvcc,
      hipcc: toolchains.hipcc,
    }),
    ...opts.sandbox,
    install: {
      enabled: opts.install !== false && !!chosen && canInstall(chosen.install),
      index: redactUrl(opts.pipIndexUrl ?? chosen?.install.index ?? null),
    },
    allowNetwork: opts.allowNetwork ?? DEFAULT_NETWORK_POLICY,
    probeErrors: errors,
  };
}

/** A URL without the credentials it may carry (`https://user:token@host/simple` → `https://***@host/simple`). */
export function redactUrl(url: string | null): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = '***';
    u.password = '';
    return u.toString();
  } catch {
    return url.replace(/\/\/[^/@]*@/, '//***@');
  }
}

/**
 * NVIDIA: the CSV query first (exact compute capability on drivers ≥ 510, retried without it on
 * older ones), the default table for the driver's CUDA version, and `-q -x` then the table as
 * fallbacks when the query's output is unreadable.
 */
async function probeNvidia(exec: ExecFn, timeoutMs: number, errors: string[]): Promise<Accelerator[]> {
  const query = (fields: readonly string[]) =>
    exec('nvidia-smi', [`--query-gpu=${fields.join(',')}`, '--format=csv,noheader,nounits'], { timeoutMs });
  let r = await query(NVIDIA_QUERY_FIELDS);
  if (r.error === 'not found') {
    errors.push('nvidia-smi: not found (no NVIDIA driver tools)');
    return [];
  }
  if (r.error) {
    errors.push(describeFailure('nvidia-smi', r));
    return [];
  }
  let parsed = parseNvidiaSmiCsv(r.stdout + r.stderr, NVIDIA_QUERY_FIELDS);
  if (parsed.error && /not a valid field/i.test(parsed.error)) {
    r = await query(NVIDIA_QUERY_FIELDS_OLD);
    parsed = parseNvidiaSmiCsv(r.stdout + r.stderr, NVIDIA_QUERY_FIELDS_OLD);
  }
  if (
    parsed.error &&
    /NVIDIA-SMI has failed|communicate with the NVIDIA driver|Failed to initialize NVML|No devices were found/i.test(parsed.error)
  ) {
    errors.push(`nvidia-smi: ${parsed.error}`);
    return [];
  }

  const table = await exec('nvidia-smi', [], { timeoutMs });
  const fromTable = table.error ? null : parseNvidiaSmiTable(table.stdout);
  if (parsed.error) {
    const xml = await exec('nvidia-smi', ['-q', '-x'], { timeoutMs });
    const fromXml = xml.error ? null : parseNvidiaSmiXml(xml.stdout);
    const fallback = [fromXml, fromTable].find((x): x is NvidiaSmiResult => !!x && x.gpus.length > 0);
    if (!fallback) {
      errors.push(`nvidia-smi: ${parsed.error}${fromXml?.error ? `; -q -x: ${fromXml.error}` : ''}`);
      return [];
    }
    parsed = fallback;
  }
  const cuda = parsed.cuda ?? fromTable?.cuda ?? null;
  return parsed.gpus.map((g) => ({
    vendor: 'nvidia' as const,
    index: g.index,
    name: g.name,
    memoryMiB: g.memoryMiB,
    driver: g.driver ?? parsed.driver,
    runtime: (g.cuda ?? cuda) ? `cuda ${g.cuda ?? cuda}` : null,
    arch: g.arch,
  }));
}

/**
 * AMD: rocminfo gives the exact gfx target and VRAM; rocm-smi (or amd-smi where rocm-smi is gone)
 * gives product names and the driver. Merged by index.
 */
async function probeAmd(exec: ExecFn, timeoutMs: number, errors: string[]): Promise<AmdGpu[]> {
  const [ri, rs] = await Promise.all([
    exec('rocminfo', [], { timeoutMs }),
    exec('rocm-smi', ['--showproductname', '--showmeminfo', 'vram', '--showdriverversion', '--json'], { timeoutMs }),
  ]);
  const info = ri.error ? null : parseRocminfo(ri.stdout + ri.stderr);
  if (ri.error === 'not found') errors.push('rocminfo: not found (no ROCm)');
  else if (ri.error) errors.push(describeFailure('rocminfo', ri));
  else if (info?.error) errors.push(`rocminfo: ${info.error}`);

  let smi = rs.error ? null : parseRocmSmi(rs.stdout);
  if (!rs.error && rs.code !== 0 && (smi?.gpus.length ?? 0) === 0) {
    // Older rocm-smi versions reject some of the flags above: ask for the names alone.
    const again = await exec('rocm-smi', ['--showproductname', '--json'], { timeoutMs });
    if (!again.error) smi = parseRocmSmi(again.stdout);
  }
  if (rs.error === 'not found') {
    const a = await exec('amd-smi', ['static'], { timeoutMs });
    if (!a.error) smi = parseAmdSmi(a.stdout);
    // Both SMIs missing is the normal state of a machine without ROCm: rocminfo already said so.
    else if (a.error !== 'not found') errors.push(describeFailure('amd-smi', a));
  } else if (rs.error) errors.push(describeFailure('rocm-smi', rs));
  // rocm-smi with no GPU is expected when rocminfo already reported why.
  if (smi?.error && (info?.gpus.length ?? 0) > 0) errors.push(`rocm-smi: ${smi.error}`);

  const a = info?.gpus ?? [];
  const b = smi?.gpus ?? [];
  const base = a.length >= b.length ? a : b;
  const other = base === a ? b : a;
  return base.map((g, i) => {
    const o = other[i];
    return {
      index: i,
      name: g.name ?? o?.name ?? null,
      memoryMiB: g.memoryMiB ?? o?.memoryMiB ?? null,
      arch: (base === a ? g.arch : o?.arch) ?? g.arch ?? o?.arch ?? null,
      driver: g.driver ?? o?.driver ?? smi?.driver ?? null,
      deviceId: g.deviceId ?? o?.deviceId ?? null,
    };
  });
}

async function probeSysctl(exec: ExecFn, timeoutMs: number, errors: string[]): Promise<SysctlInfo | null> {
  const r = await exec('sysctl', ['machdep.cpu.brand_string', 'machdep.cpu.core_count', 'hw.memsize'], { timeoutMs });
  if (r.error || r.code !== 0) {
    // sysctl exits non-zero when one key is unknown (core_count on Apple silicon) but prints the rest.
    if (!r.stdout.trim()) {
      errors.push(describeFailure('sysctl', r));
      return null;
    }
  }
  return sysctlInfo(r.stdout);
}

async function probePythons(opts: ProbeOptions, exec: ExecFn, timeoutMs: number, errors: string[]): Promise<PythonProbe[]> {
  const candidates = pythonCandidates({ python: opts.python, env: opts.env, platform: opts.platform });
  if (candidates.length === 0) {
    errors.push('python: no interpreter found on PATH or in the usual places');
    return [];
  }
  // `import torch` alone takes ~1.3 s idle and far longer on a loaded machine; a slow
  // interpreter must not be mistaken for one without PyTorch.
  const results = await Promise.all(candidates.map((c) => probePython(c, exec, Math.max(timeoutMs, 90_000))));
  const out: PythonProbe[] = [];
  const seen = new Set<string>();
  for (const r of results) {
    if (r.error) errors.push(`python ${r.error}`);
    if (!r.probe) continue;
    // pyenv shims, python/python3 and symlinks reach the same interpreter: keep its first appearance.
    if (seen.has(r.probe.identity)) continue;
    seen.add(r.probe.identity);
    out.push(r.probe);
  }
  return out;
}

/**
 * Fills what the vendor tools left open from what PyTorch sees: the exact CUDA arch (compute
 * capability) or gfx target, and accelerators torch can use when the vendor tools are missing.
 */
function enrichFromTorch(accelerators: Accelerator[], chosen: PythonProbe, errors: string[]): void {
  const torch = chosen.runtime.torch;
  if (!torch?.cudaAvailable || chosen.devices.length === 0) return;
  const vendor = torch.hip ? 'amd' : 'nvidia';
  const mine = accelerators.filter((a) => a.vendor === vendor);
  if (mine.length === 0) {
    for (const d of chosen.devices) {
      accelerators.push({
        vendor,
        index: d.index,
        name: d.name,
        memoryMiB: d.memoryMiB,
        driver: null,
        runtime: vendor === 'amd' ? `rocm ${majorMinor(torch.hip ?? '')}` : torch.cuda ? `cuda ${torch.cuda}` : null,
        arch: vendor === 'amd' ? normalizeGfx(d.gcnArch) : archFromComputeCap(d.capability),
      });
    }
    errors.push(`${vendor === 'amd' ? 'rocm-smi/rocminfo' : 'nvidia-smi'} gave no GPUs; accelerators taken from PyTorch`);
    return;
  }
  // CUDA_VISIBLE_DEVICES may hide or reorder devices: only fill in when the names agree.
  for (const d of chosen.devices) {
    const a = mine[d.index];
    if (!a || !sameName(a.name, d.name)) continue;
    if (vendor === 'nvidia') a.arch = archFromComputeCap(d.capability) ?? a.arch;
    else a.arch ??= normalizeGfx(d.gcnArch);
  }
}

function sameName(a: string, b: string): boolean {
  const norm = (s: string) =>
    s
      .toLowerCase()
      .replace(/\.\.\.$/, '')
      .replace(/^nvidia\s+/, '')
      .trim();
  const x = norm(a);
  const y = norm(b);
  return x === y || x.startsWith(y) || y.startsWith(x);
}

function majorMinor(v: string): string {
  const m = /^(\d+)\.(\d+)/.exec(v);
  return m ? `${m[1]}.${m[2]}` : v;
}

/** Free space for unprivileged users on the data directory's file system (its nearest existing parent). */
async function diskFree(dataDir: string): Promise<number> {
  let dir = resolve(dataDir);
  for (;;) {
    try {
      const s = await statfs(dir);
      return Math.floor((Number(s.bavail) * Number(s.bsize)) / 2 ** 20);
    } catch (err) {
      const parent = dirname(dir);
      if (parent === dir) throw err;
      dir = parent;
    }
  }
}
