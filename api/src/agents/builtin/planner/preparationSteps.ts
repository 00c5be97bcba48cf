/**
 * Rule: the preparation the code needs before the full run, each step checked against a reference
 * run of the bounded workload: NVIDIA → AMD (an optional optimization on NVIDIA, the required
 * CUDA → HIP and device-agnostic migration validated on AMD), code hard-wired to CUDA with no NVIDIA
 * worker online (a device-agnostic migration), or PyTorch calls newer than the workers' torch
 * (a version migration, its reference taken from the rewrite). One plan cannot yet both migrate
 * and rewrite settings, or migrate and run a data-preparation step first: the job stops saying so.
 */
import { call, type PlannerRule } from './planning.js';
import { boundedScale } from './workload.js';

export const preparationSteps: PlannerRule = (p) => {
  const { entry, hardware, evaluate, bounded } = p;
  const workload = { command: bounded, timeoutSec: 900, scale: boundedScale(entry, p.args, p.configSettings) ?? null };
  const frozenFiles = evaluate && evaluate.command.includes('.py') ? [evaluate.command.split(' ')[1]!] : [];
  const here = { workload: hardware.workload, ...(hardware.accelVendor ? { accelVendor: hardware.accelVendor } : {}) };
  p.preparation = p.toAmd
    ? {
        workload,
        compare: ['outputs'],
        reference: { workload: 'torch-cuda', accelVendor: 'nvidia' },
        target: { workload: 'torch-rocm', accelVendor: 'amd' },
        steps: [
          // Tried on the source GPU against the original; kept only if the timings say faster (a
          // candidate that does not fit the code is recorded as SKIPPED, with why).
          { name: 'optimize', kind: 'optimization', transformation: 'pin-memory', required: false, on: 'reference' },
          { name: 'migrate', kind: 'migration', transformation: 'cuda-to-hip', required: true, tolerance: { rtol: 1e-4, atol: 1e-5 } },
        ],
        revisionBudget: 2,
        frozenFiles,
        pinRun: false,
      }
    : p.migrate
      ? {
          workload,
          compare: ['outputs'],
          reference: { workload: 'torch-cuda', accelVendor: 'nvidia' },
          target: here,
          steps: [
            {
              name: 'migrate',
              kind: 'migration',
              transformation: 'pytorch-device-agnostic',
              required: true,
              tolerance: { rtol: 1e-4, atol: 1e-5 },
            },
          ],
          revisionBudget: 3,
          frozenFiles,
          pinRun: false,
        }
      : p.versionMigrate
        ? {
            // The unchanged code runs on no online worker: the stage takes the reference from the
            // rewrite on the same hardware (a FALLBACK record says so) and checks it is repeatable.
            workload,
            compare: ['outputs'],
            reference: here,
            target: here,
            steps: [
              {
                name: 'migrate',
                kind: 'migration',
                transformation: 'pytorch-version-compat',
                required: true,
                tolerance: { rtol: 1e-4, atol: 1e-5 },
              },
            ],
            revisionBudget: 2,
            frozenFiles,
            pinRun: false,
          }
        : null;
  if (p.askPlan.edits.length && p.preparation) {
    return call('give_up', {
      reason: `${entry.path} needs a migration before it can run here, and the settings you named (${p.askPlan.edits.map((e) => e.name).join(', ')}) have no flag, so they need a rewrite of the code; one plan cannot do both yet. Change them in the code and upload it again, or bring a worker online that runs the code as it is.`,
    });
  }
  if (p.before.length && p.preparation) {
    return call('give_up', {
      reason: `${entry.path} needs both a migration (it is hard-wired to CUDA and no NVIDIA worker is online) and a data-preparation step first (${p.before[0]!.command}); one plan cannot do both yet. Run the preparation yourself and upload its output, or bring an NVIDIA worker online.`,
    });
  }
  return undefined;
};
