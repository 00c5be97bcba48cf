/**
 * Rule: the hardware. A torch pin that only some online workers meet sends the run to those (the
 * plan's minTorch, which the claim enforces), so the hardware is chosen among their classes.
 * NVIDIA → AMD: code written for NVIDIA — CUDA C++ kernels or PyTorch hard-wired to CUDA — that the
 * user wants on an AMD GPU, with an NVIDIA worker online for the reference and an AMD worker for the
 * target, is migrated (`toAmd`: the reference runs unchanged on NVIDIA, an optimization is tried
 * there, the migration is validated on AMD). Hard-wired to CUDA with no NVIDIA worker online: a
 * required migration to what is online (`migrate`). Otherwise the preferred accelerator when one is
 * online, NVIDIA for "any", else the CPU; `python` for a project without torch.
 */
import { satisfies } from '../../planner/analyzeProject.js';
import type { WorkerClass } from '../../../domain/workers/networkCapacity.js';
import type { Hardware, PlannerRule } from './planning.js';

export const hardwareChoice: PlannerRule = (p) => {
  const { facts, cap, entry, request, preference, online, blocking } = p;
  const torchPin =
    facts.usesTorch && !blocking.some((x) => x.name === 'torch') ? facts.pins.find((x) => x.name === 'torch' && x.spec) : undefined;
  const minTorch =
    torchPin && cap.classes.some((c) => c.torchVersions.some((v) => satisfies(v, torchPin.spec) !== true))
      ? lowerBound(torchPin.spec)
      : null;
  const meetsPin = (c: WorkerClass) => !minTorch || c.torchVersions.some((v) => satisfies(v, torchPin!.spec) === true);
  const has = (w: string, vendor?: string) =>
    cap.classes.some((c) => c.workloads.includes(w) && (!vendor || c.accelVendor === vendor) && (!w.startsWith('torch') || meetsPin(c)));
  let hardware: Hardware;
  let migrate = false;
  const wantsAmd = preference === 'amd' || /\b(AMD|ROCm|Radeon|Instinct)\b/i.test(request);
  const toAmd =
    facts.usesTorch &&
    wantsAmd &&
    (facts.cudaSources.length > 0 || entry.hardwiredCuda.length > 0) &&
    has('torch-cuda', 'nvidia') &&
    has('torch-rocm', 'amd');
  if (toAmd) {
    hardware = { workload: 'torch-rocm', accelVendor: 'amd' };
    migrate = true;
  } else if (!facts.usesTorch) hardware = { workload: 'python' };
  else if (entry.hardwiredCuda.length && !online) hardware = { workload: 'torch-cuda', accelVendor: 'nvidia' };
  else if (entry.hardwiredCuda.length && !has('torch-cuda', 'nvidia')) {
    // Hard-wired to CUDA and no NVIDIA worker online: migrate it (required) to what is online.
    hardware =
      preference === 'amd' && has('torch-rocm', 'amd')
        ? { workload: 'torch-rocm', accelVendor: 'amd' }
        : preference === 'apple' && has('torch-mps', 'apple')
          ? { workload: 'torch-mps', accelVendor: 'apple' }
          : has('torch-cpu')
            ? { workload: 'torch-cpu' }
            : has('torch-rocm', 'amd')
              ? { workload: 'torch-rocm', accelVendor: 'amd' }
              : { workload: 'torch-mps', accelVendor: 'apple' };
    migrate = true;
  } else if ((preference === 'nvidia' || entry.hardwiredCuda.length) && has('torch-cuda', 'nvidia'))
    hardware = { workload: 'torch-cuda', accelVendor: 'nvidia' };
  else if (preference === 'amd' && has('torch-rocm', 'amd')) hardware = { workload: 'torch-rocm', accelVendor: 'amd' };
  else if (preference === 'apple' && has('torch-mps', 'apple')) hardware = { workload: 'torch-mps', accelVendor: 'apple' };
  else if (preference === 'any' && has('torch-cuda', 'nvidia')) hardware = { workload: 'torch-cuda', accelVendor: 'nvidia' };
  else hardware = { workload: 'torch-cpu' };
  p.torchPin = torchPin;
  p.minTorch = minTorch;
  p.hardware = hardware;
  p.migrate = migrate;
  p.toAmd = toAmd;
  return undefined;
};

/** The lowest major.minor a requirement spec allows (">=2.1", "==2.3.0", "~=2.1.0", ">2.0" → "2.1", "2.3", "2.1", "2.0"); null when it has no lower bound. */
export function lowerBound(spec: string): string | null {
  const lows = spec
    .split(',')
    .map((part) => /^(==|>=|~=|>)\s*(\d+)\.(\d+)/.exec(part.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [Number(m[2]), Number(m[3])] as const);
  const high = lows.sort((a, b) => b[0] - a[0] || b[1] - a[1])[0];
  return high ? `${high[0]}.${high[1]}` : null;
}
