import { describe, expect, it } from 'vitest';
import { entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { smokeRun } from './smokeRun.js';

const flag = (f: string, def: string | null) => ({ flag: f, default: def, type: 'int', help: null });
const epochs = {
  entry: 'main.py',
  settings: [
    { id: 'main.py#epochs', name: 'epochs', kind: 'flag', file: 'main.py', type: 'int', default: '14', help: null, flag: '--epochs' },
  ],
  problems: [],
  next: null,
};
const tools: [string, unknown][] = [['list_settings', epochs]];

describe('smokeRun', () => {
  const facts = { entryPoints: [entry('main.py', { flags: [flag('--epochs', '14'), flag('--seed', '1')] })] };
  it('two epochs of the full run as the smoke run; one epoch and seed 0 as the bounded workload', () => {
    const { answer, planning } = runRules({ request: 'train for 10 epochs', facts, reads: { 'main.py': '' }, tools }, smokeRun);
    expect(answer).toBeNull();
    expect(planning.smoke).toEqual({
      command: 'python main.py --epochs 2',
      timeoutSec: 1800,
      scale: { unit: 'epoch', bounded: 2, full: 10 },
    });
    expect(planning.bounded).toBe('python main.py --epochs 1 --seed 0');
  });
  it('none when the user asks for none, when the run is itself tiny, or when the code is migrated', () => {
    expect(
      runRules({ request: 'train for 10 epochs, no smoke run', facts, reads: { 'main.py': '' }, tools }, smokeRun).planning.smoke,
    ).toBeNull();
    expect(runRules({ request: 'train for 2 epochs', facts, reads: { 'main.py': '' }, tools }, smokeRun).planning.smoke).toBeNull();
    const cuda = { usesTorch: true, entryPoints: [entry('main.py', { flags: facts.entryPoints[0]!.flags, hardwiredCuda: ['main.py:4'] })] };
    expect(runRules({ request: 'train for 10 epochs', facts: cuda, reads: { 'main.py': '' }, tools }, smokeRun).planning.smoke).toBeNull();
  });
});
