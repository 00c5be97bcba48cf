/**
 * Rule (the last): the plan the rules before it decided, submitted — its summary and steps in
 * words, the command, the hardware, every ask's disposition, the settings rewritten, the outputs,
 * the acceptance criteria, the preparation, the smoke run or the shards, the steps before the run,
 * the packages to install, the checkpoint folder kept for a resume.
 */
import { mergeWords } from '../../../domain/jobs/shards.js';
import { checkableOutputs } from '../checkableOutputs.js';
import { call, type PlannerRule } from './planning.js';

export const submitPlan: PlannerRule = (p) => {
  const {
    entry,
    facts,
    cap,
    hardware,
    checkpoint,
    sharding,
    smoke,
    resumable,
    evaluate,
    before,
    install,
    preparation,
    minTorch,
    torchPin,
    askPlan,
    bounded,
    command,
    asked,
  } = p;
  const versionMigrate = p.versionMigrate;
  const pipelineWords =
    (minTorch && hardware.workload.startsWith('torch')
      ? ` Only workers with torch ≥ ${minTorch} take it (${torchPin!.file} pins torch${torchPin!.spec}; online: ${cap.summary}).`
      : '') +
    (before.length ? ` First \`${before[0]!.command}\` prepares ${before[0]!.produces.join(', ')}, which the run reads.` : '') +
    p.downloads.map((w) => ` ${w}`).join('') +
    (install.length ? ` A setup phase installs ${install.join(', ')} on the worker first.` : '');
  const checkable = checkableOutputs({
    source: p.source,
    command,
    workload: hardware.workload,
    request: p.request,
    preparation: !!preparation,
    service: false,
  });
  return submit({
    summary:
      (p.toAmd
        ? `${entry.path} is written for NVIDIA GPUs (${[...facts.cudaSources.slice(0, 3), ...entry.hardwiredCuda.slice(0, 2)].join(', ')}) and you asked for AMD: take a reference run of \`${bounded}\` on an NVIDIA worker, try an optimization there, migrate CUDA C++ to HIP and PyTorch device code to device-agnostic, check the migration on an AMD worker against the NVIDIA reference, then train the frozen result on AMD${checkpoint ? ` and reload and evaluate ${checkpoint}` : ''}.${asked ? ' (Planned with your answers.)' : ''}`
        : p.migrate
          ? `${entry.path} is hard-wired to CUDA (${entry.hardwiredCuda.slice(0, 3).join(', ')}) and no NVIDIA worker is online (${cap.summary}): migrate it to device-agnostic code, check the rewrite against a reference run of \`${bounded}\`, then train the frozen result on a ${hardware.workload} worker${checkpoint ? ` and reload and evaluate ${checkpoint}` : ''}.${asked ? ' (Planned with your answers.)' : ''}`
          : versionMigrate
            ? `Migrate the calls of ${entry.path}'s project that are newer than the workers' torch (${[...new Set(versionMigrate.uses.map((u) => u.api))].join(', ')}) to what torch ${versionMigrate.torch} has, check the rewrite with two runs of \`${bounded}\` on a ${hardware.workload} worker, then run the frozen result${checkpoint ? ` and reload and evaluate ${checkpoint}` : ''}. (Planned with your answers.)`
            : sharding?.spec
              ? `Run ${entry.path} unchanged on ${sharding.spec.shards.length} ${hardware.workload} workers at once. ${sharding.reason}`
              : `Run ${entry.path} as it is on a ${hardware.workload} worker${checkpoint ? `, keep ${checkpoint}, then reload it on a worker and evaluate it` : ''}.${facts.dataFolders.length ? ` Data shipped with the code: ${facts.dataFolders.join(', ')}.` : ''}${asked ? ' (Planned with your answers.)' : ''}`) +
      (sharding && !sharding.spec ? ` ${sharding.reason}` : '') +
      (p.launch ? ` ${p.launch.words}` : '') +
      pipelineWords,
    steps: [
      ...before.map((b) =>
        b.network === 'download'
          ? `Download the data: \`${b.command}\` — the only step with the network${b.urls?.length ? ` (from ${b.urls.slice(0, 3).join(', ')}${b.urls.length > 3 ? ', …' : ''})` : ''}; cached on the worker; hands ${b.produces.join(', ')} to the run, which has no network`
          : `Prepare the data: \`${b.command}\` (hands ${b.produces.join(', ')} to the run)`,
      ),
      ...(p.toAmd
        ? [
            `Reference on NVIDIA: \`${bounded}\``,
            'Optimize on NVIDIA where it pays (kept only when faster and equal)',
            'Migrate CUDA C++ → HIP and PyTorch device code → device-agnostic (required)',
            'Validate on AMD against the NVIDIA reference (revisions within the budget)',
            'Freeze the accepted code',
          ]
        : p.migrate
          ? [
              `Reference: \`${bounded}\``,
              'Migrate to device-agnostic code (required) and check it against the reference',
              'Freeze the accepted code',
            ]
          : versionMigrate
            ? [
                `Reference: \`${bounded}\` on the rewrite (the unchanged code needs a newer torch)`,
                "Migrate the newer PyTorch calls to the workers' torch (required) and check the rewrite is repeatable",
                'Freeze the accepted code',
              ]
            : []),
      ...(smoke
        ? [
            `Smoke run: \`${smoke.command}\` (${smoke.scale.bounded} of ${smoke.scale.full} ${smoke.scale.unit}s) on the same hardware, to catch errors early and estimate the full run`,
          ]
        : []),
      ...(sharding?.spec
        ? [
            `Adaptation check: \`${sharding.spec.check.original}\` against the same ${sharding.spec.check.shards.length} shards merged (${(sharding.spec.merge.kind ?? 'fields') === 'fields' ? sharding.spec.merge.fields.map((f) => `${f.name}: ${f.how}`).join(', ') : mergeWords(sharding.spec.merge)})`,
            ...sharding.spec.shards.map((s, i) => `Shard ${i + 1}: \`${s.command}\``),
            `Merge ${(sharding.spec.merge.kind ?? 'fields') === 'fields' ? sharding.spec.merge.file : mergeWords(sharding.spec.merge)}`,
          ]
        : [`Run \`${command}\``]),
      ...(resumable
        ? [
            `Checkpoints the program writes in ${resumable.path}/${resumable.flag ? ` (${resumable.flag})` : ''} are uploaded as they change; a drained or lost run resumes from the latest on another worker`,
          ]
        : []),
      'Collect outputs/',
      ...(evaluate
        ? [
            `Evaluate: \`${evaluate.command}\`${evaluate.reports.length ? `; it must report ${evaluate.reports.join(', ')}` : ''}${evaluate.metrics.length ? `; required: ${evaluate.metrics.map((m) => `${m.name} ${m.op} ${m.value}`).join(', ')}` : ''}`,
          ]
        : []),
      'Check the acceptance criteria',
    ],
    command,
    environment: askPlan.environment.length ? askPlan.environment : null,
    hardware: {
      workload: hardware.workload,
      accelVendor: hardware.accelVendor ?? null,
      minMemoryMiB: null,
      minAccelMemoryMiB: null,
      minTorch: minTorch && hardware.workload.startsWith('torch') ? minTorch : null,
      ...(p.launch && p.launch.processes > 1 ? { devices: p.launch.processes } : {}),
    },
    timeoutSec: askPlan.timeoutSec ?? 3600,
    asks: p.dispositions,
    ...(askPlan.edits.length ? { settings: askPlan.edits } : {}),
    outputs: [...p.outputs],
    acceptance: {
      exitCode: 0,
      requiredFiles: [...(checkpoint ? [checkpoint] : []), ...p.resultFiles],
      metrics: p.runMetrics,
      evaluate: evaluate ?? null,
    },
    preparation,
    smoke,
    ...(sharding?.spec ? { shards: sharding.spec } : {}),
    ...(before.length && !preparation ? { before } : {}),
    ...(install.length ? { install: { pip: install } } : {}),
    ...(resumable ? { checkpoint: resumable } : {}),
    ...(checkable ? { checkable } : {}),
  });
};

/** submit_plan with its words within the schema's bounds (a sweep's chained command in a step is long). */
const submit = (plan: Record<string, unknown> & { steps: string[] }) =>
  call('submit_plan', { ...plan, steps: plan.steps.map((st) => (st.length > 500 ? `${st.slice(0, 499)}…` : st)) });
