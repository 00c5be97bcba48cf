import { describe, expect, it } from 'vitest';
import { CPU_WORKER, entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { torchPins } from './torchPins.js';

const pin = { name: 'torch', spec: '==2.3.0', file: 'requirements.txt', line: 'torch==2.3.0' };
const facts = { usesTorch: true, pins: [pin], entryPoints: [entry('train.py')] };
const check = {
  torch: '2.1.0',
  workload: 'torch-cpu',
  uses: [{ api: 'torch.nn.functional.rms_norm', file: 'train.py', line: 3 }],
  verdict: 'migratable',
  summary: 'train.py calls torch.nn.functional.rms_norm (PyTorch ≥ 2.4); it is rewritten for 2.1.0.',
};

describe('torchPins', () => {
  it('no online worker has PyTorch: the job stops saying how to get one, before any question', () => {
    const { answer } = runRules(
      { request: 'train it', facts, classes: [{ ...CPU_WORKER, workloads: ['python', 'shell'], torchVersions: [] }] },
      torchPins,
    );
    expect(answer?.name).toBe('give_up');
    expect(answer?.args.reason).toMatch(
      /^The project imports torch \(requirements.txt pins torch==2\.3\.0\), but no online worker has PyTorch .*apt-get install python3-torch/,
    );
  });

  it("a pin the workers' torch misses: the calls are checked, then the user chooses migrating or stopping", () => {
    expect(runRules({ request: 'train it', facts }, torchPins).answer).toEqual({
      name: 'check_torch_apis',
      args: { workload: 'torch-cpu' },
    });
    const asked = runRules({ request: 'train it', facts, tools: [['check_torch_apis', check]] }, torchPins).answer!;
    expect(asked.name).toBe('ask_user');
    expect(asked.args.choices).toEqual(['Migrate those calls to torch 2.1.0 (checked by a bounded run first)', 'Stop the job']);
    const migrate = runRules(
      {
        request: 'train it',
        facts,
        tools: [['check_torch_apis', check]],
        answers: ['requirements.txt pins torch==2.3.0: Migrate those calls to torch 2.1.0'],
      },
      torchPins,
    );
    expect(migrate.answer).toBeNull();
    expect(migrate.planning.versionMigrate).toEqual(check);
    expect(migrate.planning.blocking).toEqual([pin]);
    const stop = runRules(
      { request: 'train it', facts, tools: [['check_torch_apis', check]], answers: ['requirements.txt pins torch==2.3.0: Stop the job'] },
      torchPins,
    ).answer!;
    expect(stop).toEqual({
      name: 'give_up',
      args: { reason: 'requirements.txt pins torch==2.3.0, but the online workers have torch 2.1.0. Stopped at your request.' },
    });
  });

  it('a call no rewrite replaces is explained, not asked; a pin the workers meet is no question', () => {
    expect(
      runRules(
        {
          request: 'train it',
          facts,
          tools: [['check_torch_apis', { ...check, verdict: 'blocked', summary: 'torch.compile has no equivalent.' }]],
        },
        torchPins,
      ).answer,
    ).toEqual({
      name: 'give_up',
      args: { reason: 'requirements.txt pins torch==2.3.0, but the online workers have torch 2.1.0. torch.compile has no equivalent.' },
    });
    const met = runRules({ request: 'train it', facts: { ...facts, pins: [{ ...pin, spec: '>=2.0' }] } }, torchPins);
    expect(met.answer).toBeNull();
    expect(met.planning.blocking).toEqual([]);
  });
});
