import { describe, expect, it } from 'vitest';
import { entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { preparationSteps } from './preparationSteps.js';

const flag = (f: string, def: string) => ({ flag: f, default: def, type: 'int', help: null });
const cuda = entry('train.py', { flags: [flag('--epochs', '5')], hardwiredCuda: ['train.py:4'] });

describe('preparationSteps', () => {
  it('hard-wired to CUDA with only a CPU worker: a required device-agnostic migration checked against a bounded reference on NVIDIA', () => {
    const { answer, planning } = runRules(
      { request: 'train it', facts: { usesTorch: true, entryPoints: [cuda] }, reads: { 'train.py': '' } },
      preparationSteps,
    );
    expect(answer).toBeNull();
    expect(planning.preparation).toEqual({
      workload: { command: 'python train.py --epochs 1', timeoutSec: 900, scale: { unit: 'epoch', bounded: 1, full: 5 } },
      compare: ['outputs'],
      reference: { workload: 'torch-cuda', accelVendor: 'nvidia' },
      target: { workload: 'torch-cpu' },
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
      frozenFiles: [],
      pinRun: false,
    });
  });

  it('code that runs as it is needs none; a migration and a rewrite of settings in one plan stop the job saying so', () => {
    expect(
      runRules(
        { request: 'train it', facts: { usesTorch: true, entryPoints: [entry('train.py')] }, reads: { 'train.py': '' } },
        preparationSteps,
      ).planning.preparation,
    ).toBeNull();
    const constants = {
      entry: 'train.py',
      settings: [
        {
          id: 'train.py#lr',
          name: 'lr',
          kind: 'constant',
          file: 'train.py',
          type: 'float',
          default: '0.1',
          help: null,
          span: { line: 1, col: 5, endLine: 1, endCol: 8 },
        },
      ],
      problems: [],
      next: null,
    };
    const { answer } = runRules(
      {
        request: 'train it with lr 0.5',
        facts: { usesTorch: true, entryPoints: [entry('train.py', { hardwiredCuda: ['train.py:4'] })] },
        reads: { 'train.py': 'lr = 0.1\n' },
        tools: [['list_settings', constants]],
      },
      preparationSteps,
    );
    expect(answer?.name).toBe('give_up');
    expect(answer?.args.reason).toMatch(
      /^train\.py needs a migration before it can run here, and the settings you named \(lr\) have no flag/,
    );
  });
});
