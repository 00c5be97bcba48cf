import { describe, expect, it } from 'vitest';
import { entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { PLANNER_RULES } from './rules.js';
import { submitPlan } from './submitPlan.js';

describe('submitPlan', () => {
  it('the plan the rules decided, in full, for a script that runs as it is', () => {
    const flags = [{ flag: '--epochs', default: '20', type: 'int', help: null }];
    const epochs = {
      entry: 'main.py',
      settings: [
        { id: 'main.py#epochs', name: 'epochs', kind: 'flag', file: 'main.py', type: 'int', default: '20', help: null, flag: '--epochs' },
      ],
      problems: [],
      next: null,
    };
    const { answer } = runRules(
      {
        request: 'train for 5 epochs',
        facts: { entryPoints: [entry('main.py', { flags })] },
        reads: { 'main.py': 'print(1)\n' },
        tools: [['list_settings', epochs]],
      },
      submitPlan,
    );
    expect(answer).toEqual({
      name: 'submit_plan',
      args: {
        summary: 'Run main.py as it is on a python worker.',
        steps: [
          'Smoke run: `python main.py --epochs 2` (2 of 5 epochs) on the same hardware, to catch errors early and estimate the full run',
          'Run `python main.py --epochs 5`',
          'Collect outputs/',
          'Check the acceptance criteria',
        ],
        command: 'python main.py --epochs 5',
        environment: null,
        hardware: { workload: 'python', accelVendor: null, minMemoryMiB: null, minAccelMemoryMiB: null, minTorch: null },
        timeoutSec: 3600,
        asks: [{ ask: '5 epochs', kind: 'setting', status: 'honoured', detail: 'passed `--epochs 5`', setting: 'main.py#epochs' }],
        outputs: ['outputs'],
        acceptance: { exitCode: 0, requiredFiles: [], metrics: [], evaluate: null },
        preparation: null,
        smoke: { command: 'python main.py --epochs 2', timeoutSec: 1800, scale: { unit: 'epoch', bounded: 2, full: 5 } },
        checkable: { compare: ['outputs'], tolerance: { rtol: 1e-9, atol: 1e-12 } },
      },
    });
  });

  it('is the last rule of the table, and always answers', () => {
    expect(PLANNER_RULES.at(-1)).toBe(submitPlan);
  });
});
