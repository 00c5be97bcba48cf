import { describe, expect, it } from 'vitest';
import { entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { entryPoint } from './entryPoint.js';

const flag = (f: string, type: string | null = 'int', def: string | null = null) => ({ flag: f, default: def, type, help: null });

describe('entryPoint', () => {
  it('the only script that is not an evaluation, test, merge or setup script runs; its source is read first', () => {
    const facts = { entryPoints: [entry('train.py'), entry('eval.py'), entry('test_model.py'), entry('merge.py'), entry('setup.py')] };
    expect(runRules({ request: 'train it', facts }, entryPoint).answer).toEqual({ name: 'read_file', args: { path: 'train.py' } });
    const { answer, planning } = runRules({ request: 'train it', facts, reads: { 'train.py': 'print(1)\n' } }, entryPoint);
    expect(answer).toBeNull();
    expect(planning.entry.path).toBe('train.py');
    expect(planning.source).toBe('print(1)\n');
  });

  it('a package with a demo notebook: setup.py is never the run, the notebook is (no question "which script")', () => {
    const facts = { entryPoints: [entry('setup.py'), entry('demo.ipynb', { kind: 'notebook' })] };
    const { planning } = runRules({ request: 'Run the demo and give me the plot.', facts, reads: { 'demo.ipynb': '{}' } }, entryPoint);
    expect(planning.entry.path).toBe('demo.ipynb');
  });

  it('a script the request names wins; "train …" picks the one that saves a checkpoint and takes a run length (word_language_model: main.py, not generate.py)', () => {
    const facts = {
      entryPoints: [
        entry('main.py', { savesCheckpoint: true, flags: [flag('--epochs')] }),
        entry('generate.py', { flags: [flag('--checkpoint', 'str')] }),
      ],
    };
    expect(runRules({ request: 'run generate.py', facts, reads: { 'generate.py': '' } }, entryPoint).planning.entry.path).toBe(
      'generate.py',
    );
    expect(runRules({ request: 'train it for 1 epoch', facts, reads: { 'main.py': '' } }, entryPoint).planning.entry.path).toBe('main.py');
  });

  it('a README pipeline: the script whose products a later one reads is a step; the one left runs', () => {
    const usage = [
      { file: 'README.md', command: 'python generate_sine_wave.py', script: 'generate_sine_wave.py', module: null },
      { file: 'README.md', command: 'python train.py', script: 'train.py', module: null },
    ];
    const facts = { usage, entryPoints: [entry('generate_sine_wave.py'), entry('train.py')] };
    const reads = {
      'generate_sine_wave.py': "torch.save(data, open('traindata.pt', 'wb'))\n",
      'train.py': "data = torch.load('traindata.pt')\n",
    };
    expect(
      runRules({ request: 'run it', facts, reads: { 'generate_sine_wave.py': reads['generate_sine_wave.py'] } }, entryPoint).answer,
    ).toEqual({ name: 'read_file', args: { path: 'train.py' } });
    expect(runRules({ request: 'run it', facts, reads }, entryPoint).planning.entry.path).toBe('train.py');
  });

  it('several and nothing tells them apart: the user is asked which; an answer naming none stops the job; no entry point at all stops it', () => {
    const facts = { entryPoints: [entry('a.py'), entry('b.py')] };
    expect(runRules({ request: 'run it', facts }, entryPoint).answer).toEqual({
      name: 'ask_user',
      args: { question: 'Which script should run? The project has several entry points: a.py, b.py.', choices: ['a.py', 'b.py'] },
    });
    expect(
      runRules({ request: 'run it', facts, answers: ['Which script should run?: b.py'], reads: { 'b.py': '' } }, entryPoint).planning.entry
        .path,
    ).toBe('b.py');
    expect(runRules({ request: 'run it', facts, answers: ['Which script should run?: c.py'] }, entryPoint).answer).toEqual({
      name: 'give_up',
      args: { reason: 'The answer "c.py" names none of a.py, b.py.' },
    });
    expect(runRules({ request: 'run it', facts: { entryPoints: [] } }, entryPoint).answer?.name).toBe('give_up');
  });
});
