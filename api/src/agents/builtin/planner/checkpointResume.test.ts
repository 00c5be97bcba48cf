import { describe, expect, it } from 'vitest';
import { entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import {
  checkpointResume,
  decideCheckpointResume,
  DEFAULT_RESUME_THRESHOLD_SEC,
  RESUMABLE_ASK,
  RESUME_STEP,
  withResumeStep,
} from './checkpointResume.js';
import { PreparationSchema } from '../../../domain/jobs/planSchema.js';
import { preparationSteps } from './preparationSteps.js';
import { submitPlan } from './submitPlan.js';
import { resumeEvidence, resumeEvidenceText } from '../../../domain/preparation/resumeReplan.js';

const TRAIN =
  'import torch\nmodel = torch.nn.Linear(2, 1)\nfor epoch in range(3):\n    loss = model(torch.randn(4, 2)).sum()\n    loss.backward()\n';
const files = { 'train.py': TRAIN, 'README.md': 'notes' };
const base = { files, estimateSec: null, alreadyResumable: null };

describe('checkpointResume (planner rule)', () => {
  it('recognises the ways a user asks for it, and not other uses of the words', () => {
    for (const ask of [
      'make it resumable',
      'Train it; make the run resumable please',
      'it must survive a lost machine',
      'resume after a crash',
      'checkpointing and resuming',
    ])
      expect(RESUMABLE_ASK.test(ask), ask).toBe(true);
    for (const ask of ['train for 10 epochs', 'save a checkpoint at the end', 'resume training from pretrained weights'])
      expect(RESUMABLE_ASK.test(ask), ask).toBe(false);
  });

  it('proposes the optional step when asked, honouring the ask', () => {
    const d = decideCheckpointResume({ ...base, request: 'train it for 20 epochs and make it resumable' });
    expect(d).toMatchObject({
      propose: true,
      step: RESUME_STEP,
      why: 'asked ("make it resumable")',
      ask: { ask: 'make it resumable', status: 'honoured' },
    });
    expect(d.ask!.detail).toMatch(
      /checkpoint-resume preparation step on train\.py.*killed half-way and resumed ends bitwise equal.*runs without it and says so/,
    );
  });

  it('proposes it unasked only for a run estimated longer than the threshold (default 10 min, settable)', () => {
    expect(DEFAULT_RESUME_THRESHOLD_SEC).toBe(600);
    expect(decideCheckpointResume({ ...base, request: 'train it', estimateSec: 3600 })).toMatchObject({
      propose: true,
      why: 'the run is estimated at 3600 s, longer than 600 s',
      ask: null,
    });
    expect(decideCheckpointResume({ ...base, request: 'train it', estimateSec: 300 })).toMatchObject({
      propose: false,
      why: 'not asked, and the run is estimated at 300 s, within 600 s',
    });
    expect(decideCheckpointResume({ ...base, request: 'train it', estimateSec: 300, thresholdSec: 120 }).propose).toBe(true);
    expect(decideCheckpointResume({ ...base, request: 'train it' })).toMatchObject({
      propose: false,
      why: 'not asked, and no estimate of the run is known yet',
    });
  });

  it('an ask it cannot honour is refused with why; a script that resumes itself honours it as it is', () => {
    const none = decideCheckpointResume({ ...base, files: { 'sim.py': 'import numpy\nprint(1)\n' }, request: 'make it resumable' });
    expect(none).toMatchObject({ propose: false, ask: { status: 'refused' } });
    expect(none.ask!.detail).toMatch(/no PyTorch training loop.*restarts from the beginning/);
    const own = decideCheckpointResume({ ...base, request: 'make it resumable', alreadyResumable: { flag: '--checkpoint-dir' } });
    expect(own).toMatchObject({ propose: false, ask: { status: 'honoured' } });
    expect(own.ask!.detail).toMatch(/checkpoints itself into the worker's checkpoint folder \(--checkpoint-dir\)/);
  });

  it("adds the step after a migration, or makes a preparation of its own on the run's hardware; both valid plan parts", () => {
    const own = withResumeStep(null, { bounded: 'python train.py --epochs 1', hardware: { workload: 'torch-cpu' } });
    expect(PreparationSchema.parse(own)).toBeTruthy();
    expect(own).toMatchObject({
      reference: { workload: 'torch-cpu' },
      target: { workload: 'torch-cpu' },
      steps: [RESUME_STEP],
      workload: { command: 'python train.py --epochs 1' },
    });
    const migrate = {
      ...own,
      reference: { workload: 'torch-cuda' as const, accelVendor: 'nvidia' as const },
      steps: [{ name: 'migrate', kind: 'migration' as const, transformation: 'pytorch-device-agnostic' as const, required: true }],
    };
    const both = withResumeStep(migrate, { bounded: 'x', hardware: { workload: 'torch-cpu' } });
    expect(both.steps.map((s) => s.name)).toEqual(['migrate', 'resume']);
    expect(withResumeStep(both, { bounded: 'x', hardware: { workload: 'torch-cpu' } })).toBe(both);
    expect(PreparationSchema.parse(both)).toBeTruthy();
  });
});

describe('checkpointResume, the rule on a draft', () => {
  const flag = (f: string, def: string) => ({ flag: f, default: def, type: 'int', help: null });
  const train = entry('train.py', { flags: [flag('--epochs', '10')] });
  const draft = (request: string, source = TRAIN) => {
    const { answer, planning } = runRules(
      { request, facts: { usesTorch: true, entryPoints: [train] }, reads: { 'train.py': source } },
      preparationSteps,
    );
    expect(answer).toBeNull();
    expect(checkpointResume(planning)).toBeUndefined();
    return planning;
  };

  it('asked: the step in a preparation of its own, two epochs bounded, no smoke run beside it, the ask honoured; submit_plan gets the step and the ask', () => {
    const p = draft('train it and make it resumable');
    expect(p.preparation).toEqual({
      workload: { command: 'python train.py --epochs 2', timeoutSec: 900, scale: { unit: 'epoch', bounded: 2, full: 10 } },
      compare: ['outputs'],
      reference: { workload: 'torch-cpu' },
      target: { workload: 'torch-cpu' },
      steps: [RESUME_STEP],
      revisionBudget: 0,
      frozenFiles: [],
      pinRun: false,
    });
    expect(p.smoke).toBeNull();
    expect(p.dispositions.filter((d) => /resumable/.test(d.ask))).toEqual([
      expect.objectContaining({ ask: 'make it resumable', kind: 'other', status: 'honoured' }),
    ]);
    const items = submitPlan(p)!;
    const call = items.find((i) => i.type === 'function_call') as { name: string; arguments: string };
    expect(call.name).toBe('submit_plan');
    const args = JSON.parse(call.arguments) as { preparation: unknown; asks: { ask: string }[]; smoke: unknown };
    expect(PreparationSchema.parse(args.preparation).steps).toEqual([RESUME_STEP]);
    expect(args.asks.map((a) => a.ask)).toContain('make it resumable');
    expect(args.smoke).toBeNull();
  });

  it('in the table: the whole planner answers "make it resumable" with a plan that has the step', () => {
    const { answer } = runRules({
      request: 'train it and make it resumable',
      facts: { usesTorch: true, entryPoints: [train] },
      reads: { 'train.py': TRAIN },
    });
    expect(answer?.name).toBe('submit_plan');
    const plan = answer!.args as {
      preparation: { steps: unknown[]; workload: { command: string } };
      asks: { ask: string; status: string }[];
    };
    expect(plan.preparation.steps).toEqual([RESUME_STEP]);
    expect(plan.preparation.workload.command).toBe('python train.py --epochs 2');
    expect(plan.asks).toContainEqual(expect.objectContaining({ ask: 'make it resumable', status: 'honoured' }));
    expect(
      runRules({ request: 'train it', facts: { usesTorch: true, entryPoints: [train] }, reads: { 'train.py': TRAIN } }).answer?.args
        .preparation,
    ).toBeNull();
  });

  it('not asked and no estimate: nothing added; asked of a program with no training loop: refused with why, the plan goes on', () => {
    const p = draft('train it');
    expect(p.preparation).toBeNull();
    const sim = draft('run it; make it resumable', 'import numpy\nprint(numpy.zeros(3))\n');
    expect(sim.preparation).toBeNull();
    expect(sim.dispositions.find((d) => d.ask === 'make it resumable')).toMatchObject({
      status: 'refused',
      detail: expect.stringMatching(/no PyTorch training loop/),
    });
  });

  it("unasked, after a smoke run over the threshold: the replan's evidence gives the estimate, and the table plans the step; under it, none", () => {
    const evidence = resumeEvidenceText(1234.4, 600, 'train.py');
    expect(resumeEvidence(`Job title: t\nRequest: train it\nReplan 1: handed back. Evidence: ${evidence}`)).toEqual({
      estimateSec: 1234,
      thresholdSec: 600,
    });
    expect(
      resumeEvidence('Replan 1: the run supervisor handed the job back after the run failed. Evidence: missing module: tqdm'),
    ).toBeNull();
    const replanned = (text: string) =>
      runRules({
        request: `train it\nReplan 1: the run supervisor handed the job back. Evidence: ${text}`,
        facts: { usesTorch: true, entryPoints: [entry('train.py', { flags: [flag('--epochs', '10')] })] },
        reads: { 'train.py': TRAIN },
      }).answer!.args as { preparation: { steps: unknown[] } | null; asks: { ask: string }[] };
    const over = replanned(evidence);
    expect(over.preparation!.steps).toEqual([RESUME_STEP]);
    expect(over.asks.some((a) => /resumable/.test(a.ask))).toBe(false);
    // The same estimate under a higher threshold (the API's RESUME_THRESHOLD_SEC) proposes nothing.
    expect(replanned(resumeEvidenceText(1234, 3600, 'train.py')).preparation).toBeNull();
  });
});
