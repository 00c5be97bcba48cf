import type { Accelerator, PythonRuntime, Workload } from './types.js';

/**
 * The kinds of task this machine can take. Torch workloads are judged on the chosen interpreter, the
 * one the runner will use. torch-rocm also asks that torch can reach the device (ROCm builds expose
 * it through torch.cuda), or a ROCm wheel on a machine whose GPU it cannot use would attract work.
 */
export function deriveWorkloads(input: {
  accelerators: Accelerator[];
  python: PythonRuntime | null;
  nvcc: string | null;
  hipcc: string | null;
}): Workload[] {
  const { accelerators, python, nvcc, hipcc } = input;
  const nvidia = accelerators.some((a) => a.vendor === 'nvidia');
  const amd = accelerators.some((a) => a.vendor === 'amd');
  const torch = python?.torch ?? null;
  const out: Workload[] = ['shell'];
  if (python) out.push('python');
  if (torch) out.push('torch-cpu');
  if (torch && torch.cudaAvailable && !torch.hip && nvidia) out.push('torch-cuda');
  if (torch && torch.hip && torch.cudaAvailable && amd) out.push('torch-rocm');
  if (torch && torch.mpsAvailable) out.push('torch-mps');
  if (nvcc && nvidia) out.push('cuda-cxx');
  if (hipcc && amd) out.push('hip-cxx');
  return out;
}
