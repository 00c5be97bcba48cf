import { describe, expect, it } from 'vitest';
import { entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { pipelineSteps } from './pipelineSteps.js';

const PREPARE = "with open(os.path.join(os.path.dirname(__file__), 'train.bin'), 'wb') as f: f.write(b'')\nopen('input.txt').read()\n";
const TRAIN = "data = np.memmap(os.path.join('data', dataset, 'train.bin'))\n";

describe('pipelineSteps', () => {
  const facts = { entryPoints: [entry('train.py'), entry('data/shakespeare_char/prepare.py', { cli: null })] };
  it('a preparation script whose products the run reads runs first, from its folder, handing its folder to the run', () => {
    const reads = { 'train.py': TRAIN, 'data/shakespeare_char/prepare.py': PREPARE };
    const { answer, planning } = runRules({ request: 'train it', facts, reads }, pipelineSteps);
    expect(answer).toBeNull();
    expect(planning.before).toEqual([
      { name: 'prepare-data', command: 'cd data/shakespeare_char && python prepare.py', produces: ['data/shakespeare_char'] },
    ]);
    expect(planning.prepareScript).toBe('data/shakespeare_char/prepare.py');
  });

  it('not needed when the upload already holds what it makes, or when the run reads none of it', () => {
    const reads = { 'train.py': TRAIN, 'data/shakespeare_char/prepare.py': PREPARE };
    expect(
      runRules({ request: 'train it', facts, reads, files: ['data/shakespeare_char/train.bin'] }, pipelineSteps).planning.before,
    ).toEqual([]);
    expect(runRules({ request: 'train it', facts, reads: { ...reads, 'train.py': 'print(1)\n' } }, pipelineSteps).planning.before).toEqual(
      [],
    );
  });

  it('several that fit and none named: the user is asked which', () => {
    const two = { entryPoints: [...facts.entryPoints, entry('data/openwebtext/prepare.py', { cli: null })] };
    const reads = { 'train.py': TRAIN, 'data/shakespeare_char/prepare.py': PREPARE, 'data/openwebtext/prepare.py': PREPARE };
    expect(runRules({ request: 'train it', facts: two, reads }, pipelineSteps).answer).toEqual({
      name: 'ask_user',
      args: {
        question:
          'Which data should be prepared first? train.py reads files that several scripts write: data/shakespeare_char/prepare.py, data/openwebtext/prepare.py.',
        choices: ['data/shakespeare_char/prepare.py', 'data/openwebtext/prepare.py'],
      },
    });
    expect(runRules({ request: 'train it on shakespeare_char', facts: two, reads }, pipelineSteps).planning.prepareScript).toBe(
      'data/shakespeare_char/prepare.py',
    );
  });
});
