import { describe, expect, it } from 'vitest';
import { entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { settleAsks } from './settleAsks.js';

const main = entry('main.py', { flags: [{ flag: '--epochs', default: '10', type: 'int', help: null }] });
const epochs = {
  entry: 'main.py',
  settings: [
    { id: 'main.py#epochs', name: 'epochs', kind: 'flag', file: 'main.py', type: 'int', default: '10', help: null, flag: '--epochs' },
  ],
  problems: [],
  next: null,
};

describe('settleAsks', () => {
  it('a scale ask with nothing to split is refused saying why, without stopping the job; the dispositions keep the request’s order', () => {
    const { answer, planning } = runRules(
      {
        request: 'run it across all available workers for 3 epochs',
        facts: { entryPoints: [main] },
        reads: { 'main.py': '' },
        tools: [['list_settings', epochs]],
      },
      settleAsks,
    );
    expect(answer).toBeNull();
    expect(planning.dispositions.map((d) => [d.kind, d.status])).toEqual([
      ['scale', 'refused'],
      ['setting', 'honoured'],
    ]);
    expect(planning.dispositions[0]!.detail).toBe(
      'runs as one task: main.py is one program with nothing independent to split (no sample count, sweep or batch of inputs)',
    );
  });
});
