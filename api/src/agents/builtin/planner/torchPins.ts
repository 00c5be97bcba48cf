/**
 * Rule: what the workers have. No online worker with PyTorch for a project that imports it is
 * explained before anything else (no answer to a question could lead to a run, so none is asked).
 * A torch or numpy pin that the online workers' versions do not meet: which of the project's calls
 * are newer than the workers' torch (check_torch_apis) decides what can be offered — running it
 * as it is, migrating those calls (a checked preparation step), or nothing (a call no rewrite
 * replaces: explained, not asked). Decides `blocking` and `versionMigrate`.
 */
import { satisfies } from '../../planner/analyzeProject.js';
import type { TorchApiCheck } from '../../planner/torchApis.js';
import { call, type PlannerRule } from './planning.js';

/** The workloads a torch check may target, in the order a plan prefers them (hardwareChoice.ts). */
export const TORCH_WORKLOADS = ['torch-cuda', 'torch-rocm', 'torch-mps', 'torch-cpu'];

export const torchPins: PlannerRule = (p) => {
  const { facts, cap, online } = p;
  const versions = (name: string) => [
    ...new Set(cap.classes.flatMap((c) => (name === 'torch' ? c.torchVersions : name === 'numpy' ? c.numpyVersions : []))),
  ];
  if (online && facts.usesTorch && !cap.classes.some((c) => c.torchVersions.length)) {
    const pin = facts.pins.find((x) => x.name === 'torch');
    return call('give_up', {
      reason: `The project imports torch${pin ? ` (${pin.file} pins torch${pin.spec})` : ''}, but no online worker has PyTorch (online: ${cap.summary}). A worker needs a Python with PyTorch: on Debian/Ubuntu \`apt-get install python3-torch\`, or start the worker with \`--python PATH\` to an interpreter that has it.`,
    });
  }
  // Only offered when the workers have the package at all (otherwise "run anyway" would crash at
  // import). With no worker online nothing can be compared yet; the queued run will say why it waits.
  const blocking = online
    ? facts.pins.filter(
        (x) =>
          (x.name === 'torch' || x.name === 'numpy') &&
          x.spec &&
          versions(x.name).length > 0 &&
          !versions(x.name).some((v) => satisfies(v, x.spec) === true),
      )
    : [];
  p.blocking = blocking;
  if (!blocking.length) return undefined;
  const sentence = blocking
    .map((x) => `${x.file} pins ${x.name}${x.spec}, but the online workers have ${x.name} ${versions(x.name).join(', ')}`)
    .join('; ');
  const torchWorkload = blocking.some((x) => x.name === 'torch')
    ? TORCH_WORKLOADS.find((w) => cap.classes.some((c) => c.workloads.includes(w) && c.torchVersions.length))
    : undefined;
  if (torchWorkload && !p.last('check_torch_apis')) return call('check_torch_apis', { workload: torchWorkload });
  const check = torchWorkload ? p.last<TorchApiCheck>('check_torch_apis') : undefined;
  if (check?.verdict === 'blocked') return call('give_up', { reason: `${sentence}. ${check.summary}` });
  const migratable = check?.verdict === 'migratable';
  const migrateChoice = `Migrate those calls to torch ${check?.torch} (checked by a bounded run first)`;
  const answer = p.answerTo('pins');
  if (!answer) {
    return call(
      'ask_user',
      migratable
        ? {
            question: `${sentence}. ${check.summary} Migrate them and run on the workers' torch, or stop the job?`,
            choices: [migrateChoice, 'Stop the job'],
          }
        : {
            question: `${sentence}.${check?.verdict === 'none' ? ` ${check.summary}` : ''} Run with the workers' versions anyway, or stop the job?`,
            choices: ["Run with the workers' versions", 'Stop the job'],
          },
    );
  }
  const chosen = answer.split(':').pop() ?? '';
  if (/stop|cancel|no\b/i.test(chosen)) return call('give_up', { reason: `${sentence}. Stopped at your request.` });
  p.versionMigrate = migratable && /migrat/i.test(chosen) ? check : null;
  if (migratable && !p.versionMigrate)
    return call('give_up', {
      reason: `${sentence}. ${check.summary} Without that migration the code cannot run on the workers' torch; stopped.`,
    });
  return undefined;
};
