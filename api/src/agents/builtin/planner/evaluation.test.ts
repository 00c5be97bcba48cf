import { describe, expect, it } from 'vitest';
import { entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { evaluation } from './evaluation.js';

const train = entry('train.py', { savesCheckpoint: true });
const evalPy = entry('eval.py', {
  flags: [{ flag: '--checkpoint', default: null, type: 'str', help: null }],
  reportsMetrics: ['eval_accuracy'],
});
const SRC = "torch.save(model.state_dict(), 'model.pt')\n";

describe('evaluation', () => {
  it('a run that keeps a checkpoint asks the validation specialist first', () => {
    expect(
      runRules({ request: 'train it', facts: { entryPoints: [train, evalPy] }, reads: { 'train.py': SRC } }, evaluation).answer,
    ).toEqual({
      name: 'consult_specialist',
      args: { specialist: 'validation', question: 'The run of train.py saves model.pt. What should the acceptance criteria be?' },
    });
  });

  it('then the project’s evaluation script reloads it, and a threshold it reports goes on the evaluation', () => {
    const { planning } = runRules(
      {
        request: 'train it to accuracy above 0.9',
        facts: { entryPoints: [train, evalPy] },
        reads: { 'train.py': SRC },
        tools: [['consult_specialist', 'Require exit code 0.']],
      },
      evaluation,
    );
    expect(planning.evaluate).toEqual({
      checkpoint: 'model.pt',
      command: 'python eval.py --checkpoint model.pt',
      metrics: [{ name: 'eval_accuracy', op: '>', value: 0.9 }],
      reports: ['eval_accuracy'],
    });
    expect(planning.evalFile).toBe('eval.py');
    expect(planning.runMetrics).toEqual([]);
  });

  it('no evaluation script: the reload check; no checkpoint: the thresholds stay on the run', () => {
    const { planning } = runRules(
      { request: 'train it', facts: { entryPoints: [train] }, reads: { 'train.py': SRC }, tools: [['consult_specialist', 'ok']] },
      evaluation,
    );
    expect(planning.evaluate?.command).toBe('python -m chatgpu.reload_check model.pt');
    const plain = runRules(
      { request: 'run it with loss below 0.5', facts: { entryPoints: [entry('run.py')] }, reads: { 'run.py': '' } },
      evaluation,
    ).planning;
    expect(plain.evaluate).toBeUndefined();
    expect(plain.runMetrics).toEqual([{ name: 'loss', op: '<', value: 0.5 }]);
  });
});
