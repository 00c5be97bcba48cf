import { describe, expect, it } from 'vitest';
import { CPU_WORKER, entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { requestedSweep } from './requestedSweep.js';

const main = entry('main.py', { flags: [{ flag: '--lr', default: '0.1', type: 'float', help: null }] });
const lr = {
  entry: 'main.py',
  settings: [{ id: 'main.py#lr', name: 'lr', kind: 'flag', file: 'main.py', type: 'float', default: '0.1', help: null, flag: '--lr' }],
  problems: [],
  next: null,
};
const request = 'sweep lr over 0.1, 0.01 and 0.001';

describe('requestedSweep', () => {
  it('one run per value, one after another on the one worker online; the table is what is required, no smoke run', () => {
    const { answer, planning } = runRules(
      { request, facts: { entryPoints: [main] }, reads: { 'main.py': 'print(1)\n' }, tools: [['list_settings', lr]] },
      requestedSweep,
    );
    expect(answer).toBeNull();
    expect(planning.command).toBe(
      ['0.1', '0.01', '0.001'].map((v) => `python -m chatgpu.sweep run --name lr --value ${v} -- python main.py --lr ${v}`).join(' && ') +
        ' && python -m chatgpu.sweep table . outputs/sweep.csv',
    );
    expect(planning.resultFiles).toEqual(['outputs/sweep.csv']);
    expect(planning.smoke).toBeNull();
    expect(planning.sweepDispositions).toEqual([expect.objectContaining({ status: 'honoured', setting: 'main.py#lr' })]);
  });

  it('with several workers online the values are split into shards', () => {
    const { planning } = runRules(
      {
        request,
        facts: { entryPoints: [main] },
        reads: { 'main.py': 'print(1)\n' },
        tools: [['list_settings', lr]],
        classes: [{ ...CPU_WORKER, count: 3 }],
      },
      requestedSweep,
    );
    expect(planning.sharding?.spec?.shards).toHaveLength(3);
    expect(planning.sharding?.spec?.merge).toEqual({ kind: 'rows', file: 'outputs/sweep.csv', fields: [] });
  });
});
