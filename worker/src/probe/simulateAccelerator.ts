/**
 * `--simulate-accelerator VENDOR:NAME:RUNTIME[:ARCH]` — for tests and demos only.
 *
 *   nvidia:RTX-4090:cuda-12.4            nvidia:H100:cuda-12.4:sm_90
 *   amd:RX-7900-XTX:rocm-6.1:gfx1100     amd:RX-6900-XT:rocm-5.2:gfx1030
 *   2xnvidia:RTX-4090:cuda-12.4          (a count before the vendor: that many devices, 2 to 16 —
 *                                         a multi-GPU worker for distributed launches, docs/launchers.md)
 *
 * The worker then advertises that accelerator class for scheduling (its accelerator list, the GPU
 * workloads) while every task's numerics run on the CPU: tasks get CHATGPU_DEVICE=cpu and
 * CHATGPU_SIMULATED_ACCELERATOR=<spec>, and a compiler the class implies (nvcc for NVIDIA, hipcc
 * for AMD) is used for real when the machine has it. Everything such a worker produces is labelled
 * "simulated accelerator": its capabilities, the worker row, each attempt, the preparation records,
 * the job page. A production API refuses such a worker unless its operator allows it.
 */
import type { Accelerator, Capabilities, Workload } from './types.js';

export interface SimulatedAccelerator {
  /** The option's value as given. */
  spec: string;
  vendor: 'nvidia' | 'amd';
  /** Display name ("RTX 4090"). */
  name: string;
  /** 'cuda 12.4' | 'rocm 6.1' (the probe's format). */
  runtime: string;
  arch: string | null;
  /** How many such devices the worker advertises (the `2x` prefix; absent: one). */
  count?: number;
  /** Said wherever the accelerator appears. */
  note: string;
}

const RUNTIME = { nvidia: /^cuda[-_ ]?(\d+(?:\.\d+)?)$/i, amd: /^rocm[-_ ]?(\d+(?:\.\d+)?)$/i } as const;
const ARCH = { nvidia: /^sm_\d{2,3}[a-z]?$/, amd: /^gfx[0-9a-f]{3,4}$/ } as const;

export const SIMULATED_NOTE = 'simulated accelerator: advertised for scheduling only; the numerics run on the CPU';

export function parseSimulateAccelerator(spec: string): SimulatedAccelerator | { error: string } {
  const usage = 'use VENDOR:NAME:RUNTIME[:ARCH], e.g. nvidia:RTX-4090:cuda-12.4 or amd:RX-7900-XTX:rocm-6.1:gfx1100';
  const counted = /^(\d+)x(?=[a-z])/i.exec(spec.trim());
  const count = counted ? Number(counted[1]) : 1;
  if (counted && (count < 2 || count > 16))
    return { error: `--simulate-accelerator ${JSON.stringify(spec)}: a device count (the NxVENDOR prefix) must be 2 to 16` };
  const parts = spec
    .trim()
    .slice(counted ? counted[0].length : 0)
    .split(':');
  if (parts.length < 3 || parts.length > 4) return { error: `--simulate-accelerator ${JSON.stringify(spec)}: ${usage}` };
  const [vendorRaw, nameRaw, runtimeRaw, archRaw] = parts as [string, string, string, string | undefined];
  const vendor = vendorRaw.toLowerCase();
  if (vendor !== 'nvidia' && vendor !== 'amd')
    return { error: `--simulate-accelerator: vendor must be nvidia or amd (got ${JSON.stringify(vendorRaw)}); ${usage}` };
  if (!/^[A-Za-z0-9][\w.-]{0,63}$/.test(nameRaw))
    return { error: `--simulate-accelerator: name ${JSON.stringify(nameRaw)} must be letters, digits, . - _ (e.g. RTX-4090)` };
  const rt = RUNTIME[vendor].exec(runtimeRaw);
  if (!rt)
    return {
      error: `--simulate-accelerator: runtime for ${vendor} must look like ${vendor === 'nvidia' ? 'cuda-12.4' : 'rocm-6.1'} (got ${JSON.stringify(runtimeRaw)})`,
    };
  if (archRaw !== undefined && !ARCH[vendor].test(archRaw))
    return {
      error: `--simulate-accelerator: arch for ${vendor} must look like ${vendor === 'nvidia' ? 'sm_89' : 'gfx1100'} (got ${JSON.stringify(archRaw)})`,
    };
  return {
    spec: spec.trim(),
    vendor,
    name: nameRaw.replace(/-/g, ' '),
    runtime: `${vendor === 'nvidia' ? 'cuda' : 'rocm'} ${rt[1]}`,
    arch: archRaw ?? null,
    ...(count > 1 ? { count } : {}),
    note: SIMULATED_NOTE,
  };
}

/**
 * The capabilities a simulated worker reports: the probed machine with its accelerators replaced by
 * the simulated one (marked `simulated`), and the workloads of that class the machine can serve on
 * its CPU — torch-cuda / torch-rocm when its Python has PyTorch, cuda-cxx / hip-cxx when the
 * compiler is installed.
 */
export function applySimulatedAccelerator(caps: Capabilities, sim: SimulatedAccelerator): Capabilities {
  const accelerator = (index: number): Accelerator => ({
    vendor: sim.vendor,
    index,
    name: `${sim.name} (simulated accelerator)`,
    memoryMiB: null,
    driver: null,
    runtime: sim.runtime,
    arch: sim.arch,
    simulated: true,
  });
  const torch = caps.workloads.includes('torch-cpu');
  const add: Workload[] =
    sim.vendor === 'nvidia'
      ? [...(torch ? (['torch-cuda'] as const) : []), ...(caps.toolchains.nvcc ? (['cuda-cxx'] as const) : [])]
      : [...(torch ? (['torch-rocm'] as const) : []), ...(caps.toolchains.hipcc ? (['hip-cxx'] as const) : [])];
  const gpuWorkloads: Workload[] = ['torch-cuda', 'torch-rocm', 'torch-mps', 'cuda-cxx', 'hip-cxx'];
  const workloads = [...caps.workloads.filter((w) => !gpuWorkloads.includes(w)), ...add];
  return { ...caps, accelerators: Array.from({ length: sim.count ?? 1 }, (_, i) => accelerator(i)), workloads, simulatedAccelerator: sim };
}

/** What a simulated worker adds to each task's environment (the device stays the CPU). */
export function simulatedTaskEnv(sim: SimulatedAccelerator | null | undefined): Record<string, string> {
  if (!sim) return {};
  return {
    CHATGPU_SIMULATED_ACCELERATOR: sim.spec,
    // hipcc targets AMD only with HIP_PLATFORM=amd when nvcc is also installed (as on ROCm machines).
    ...(sim.vendor === 'amd' ? { HIP_PLATFORM: 'amd' } : {}),
  };
}
