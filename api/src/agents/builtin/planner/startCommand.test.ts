import { describe, expect, it } from 'vitest';
import { entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { startCommand, startsIn } from './startCommand.js';

const flag = (f: string, def: string | null = null) => ({ flag: f, default: def, type: 'str', help: null });

describe('startCommand', () => {
  it('as the README runs it: `python -m` keeps the package importable', () => {
    const usage = [{ file: 'README.md', command: 'python -m lmtool.train --epochs 3', script: 'lmtool/train.py', module: 'lmtool.train' }];
    const { planning } = runRules(
      { request: 'run it', facts: { usage, entryPoints: [entry('lmtool/train.py')] }, reads: { 'lmtool/train.py': '' } },
      startCommand,
    );
    expect(planning.command).toBe('python -m lmtool.train');
  });

  it('a script in a folder that reads ../ paths runs from there, its outputs pointed back, with the root on the import path for its own package', () => {
    const facts = {
      entryPoints: [entry('pygcn/train.py', { flags: [flag('--out-dir')] })],
      importsByFile: { 'pygcn/train.py': { thirdParty: [], local: ['pygcn.utils'] } },
    };
    const reads = {
      'pygcn/train.py': 'from pygcn.utils import load_data\n',
      'pygcn/utils.py': 'def load_data(path="../data/cora/"): pass\n',
    };
    const { planning } = runRules({ request: 'train it', facts, reads, files: ['data/cora/cora.content'] }, startCommand);
    expect(planning.command).toBe('cd pygcn && PYTHONPATH="..:$PYTHONPATH" python train.py --out-dir ../outputs');
  });

  it('from the root, a script in a folder that imports a root-level package gets the root on its import path', () => {
    const facts = {
      entryPoints: [entry('projects/chargpt/chargpt.py', { cli: null })],
      importsByFile: { 'projects/chargpt/chargpt.py': { thirdParty: [], local: ['mingpt.model'] } },
    };
    const { answer, planning } = runRules(
      { request: 'run it', facts, reads: { 'projects/chargpt/chargpt.py': '', 'mingpt/model.py': 'class GPT: pass\n' } },
      startCommand,
    );
    expect(answer).toBeNull();
    expect(planning.runner).toBe('PYTHONPATH=".:$PYTHONPATH" python projects/chargpt/chargpt.py');
    expect(startsIn('train.py', "open('../x')", new Set(['x']), [])).toBeNull();
  });
});
