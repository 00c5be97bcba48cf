import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CPU_WORKER, entry, runRules, type Recorded } from '../../../../test/helpers/plannerConversation.js';
import { sharding } from './sharding.js';

const PI = readFileSync(path.join(import.meta.dirname, '../../../../../examples/montecarlo-pi/pi.py'), 'utf8');
const flag = (f: string, type: string, def: string) => ({ flag: f, default: def, type, help: null });
const pi = entry('pi.py', {
  flags: [flag('--samples', 'int', '1000000'), flag('--seed', 'int', '42'), flag('--out', 'str', 'outputs/result.json')],
});
const samples = {
  entry: 'pi.py',
  settings: [
    { id: 'pi.py#samples', name: 'samples', kind: 'flag', file: 'pi.py', type: 'int', default: '1000000', help: null, flag: '--samples' },
  ],
  problems: [],
  next: null,
};
const run = (over: Partial<Recorded> = {}) =>
  runRules(
    {
      request: 'estimate pi with 90000 samples',
      facts: { entryPoints: [pi] },
      reads: { 'pi.py': PI },
      tools: [['list_settings', samples]],
      classes: [{ ...CPU_WORKER, count: 3 }],
      ...over,
    },
    sharding,
  );

describe('sharding', () => {
  it('a Monte-Carlo sample count splits across the compatible workers online, each shard with its own seed; the check replaces the smoke run', () => {
    const { answer, planning } = run();
    expect(answer).toBeNull();
    expect(planning.sharding?.spec?.shards.map((s) => s.command)).toEqual(
      [42001, 42002, 42003].map((seed) => `python pi.py --samples 30000 --out outputs/result.json --seed ${seed}`),
    );
    expect(planning.smoke).toBeNull();
  });

  it('one worker, or "in one run": not split, and the plan says why (or nothing)', () => {
    expect(run({ classes: [CPU_WORKER] }).planning.sharding).toEqual({
      spec: null,
      reason: 'Not split into shards: 1 compatible worker online, so one run is as fast.',
    });
    expect(run({ request: 'estimate pi with 90000 samples in one run' }).planning.sharding).toBeNull();
  });

  it('a batch of input rows is read first to count them', () => {
    const batch = entry('score.py', { flags: [flag('--input', 'str', 'rows.csv'), flag('--out', 'str', 'outputs/scores.csv')] });
    const r = runRules(
      {
        request: 'score the rows',
        facts: { entryPoints: [batch] },
        reads: { 'score.py': 'import csv\n' },
        files: ['rows.csv'],
        classes: [{ ...CPU_WORKER, count: 2 }],
      },
      sharding,
    );
    expect(r.answer).toEqual({ name: 'read_file', args: { path: 'rows.csv' } });
  });
});
