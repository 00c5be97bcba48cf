import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { shardsProblem, type MergeField } from '../../../domain/jobs/shards.js';
import { carriedState, dumpedKeys, proposeShards, proposeSweep, splitSizes, sweepFlag } from './proposeShards.js';

const example = readFileSync(path.join(import.meta.dirname, '../../../../../examples/montecarlo-pi/pi.py'), 'utf8');
const FIELDS: MergeField[] = [
  { name: 'estimate', how: 'weighted-mean', weight: 'samples', stderr: 'stderr', check: 'within-k-se' },
  { name: 'stderr', how: 'combined-stderr', weight: 'samples', check: 'none' },
  { name: 'samples', how: 'sum', check: 'exact' },
  { name: 'hits', how: 'sum', check: 'none' },
];

describe('proposing shards', () => {
  const base = {
    runner: 'python pi.py',
    args: ['--samples', '90000', '--out', 'outputs/result.json'],
    countFlag: '--samples',
    seedFlag: '--seed',
    total: 90000,
    baseSeed: 42,
    resultFile: 'outputs/result.json',
  };
  it('splits the example across the workers with distinct recorded seeds and an explicit merge', () => {
    expect(dumpedKeys(example)).toEqual(['estimate', 'stderr', 'samples', 'hits']);
    const p = proposeShards({ ...base, source: example, workers: 3 });
    expect(p.spec!.shards).toEqual([
      { command: 'python pi.py --samples 30000 --out outputs/result.json --seed 42001', size: 30000, seed: 42001 },
      { command: 'python pi.py --samples 30000 --out outputs/result.json --seed 42002', size: 30000, seed: 42002 },
      { command: 'python pi.py --samples 30000 --out outputs/result.json --seed 42003', size: 30000, seed: 42003 },
    ]);
    expect(p.spec!.check).toEqual({
      original: 'python pi.py --samples 6000 --out outputs/result.json --seed 42',
      shards: [1, 2, 3].map((i) => `python pi.py --samples 2000 --out outputs/result.json --seed 4200${i}`),
      timeoutSec: 900,
    });
    expect(p.spec!.merge.fields).toEqual(FIELDS);
    expect(shardsProblem(p.spec!, { outputs: ['outputs'] })).toBeNull();
  });
  it('does not split with one worker, a chain carried between iterations, a training loop, or a field it cannot merge — and says why', () => {
    expect(proposeShards({ ...base, source: example, workers: 1 }).reason).toBe(
      'Not split into shards: 1 compatible worker online, so one run is as fast.',
    );
    const chain = example.replace('        x = rng.random()', '        x = 0.5 * x + rng.random()');
    expect(carriedState(chain)).toMatch(
      /the variable `x` is carried from one iteration to the next \(`x = 0\.5 \* x \+ rng\.random\(\)`\)/,
    );
    expect(proposeShards({ ...base, source: chain, workers: 3 }).spec).toBeNull();
    expect(carriedState('for b in data:\n    loss.backward()\n')).toMatch(/training loop/);
    expect(carriedState(example)).toBeNull();
    expect(carriedState('    total = total + x * x\n    n=n,\n')).toBeNull();
    const walk = example.replace('"hits": hits}', '"hits": hits, "walk_end": walk}');
    expect(proposeShards({ ...base, source: walk, workers: 3 }).reason).toBe(
      'Not split into shards: no merge rule is known for the result field `walk_end` of outputs/result.json.',
    );
  });
  it('refuses shards with a smoke run, unequal check and run splits, repeated seeds or a weighted mean without weights', () => {
    const spec = proposeShards({ ...base, source: example, workers: 3 }).spec!;
    expect(shardsProblem(spec, { outputs: ['outputs'], smoke: { command: 'x' } })).toMatch(/needs no smoke run/);
    expect(shardsProblem(spec, { outputs: ['outputs'], preparation: {} })).toMatch(/preparation steps/);
    expect(shardsProblem({ ...spec, check: { ...spec.check, shards: spec.check.shards.slice(1) } }, { outputs: ['outputs'] })).toMatch(
      /2 shard commands but the run has 3/,
    );
    expect(
      shardsProblem(
        { ...spec, shards: spec.shards.map((s, i) => ({ ...s, seed: 7, command: `${s.command} #${i}` })) },
        { outputs: ['outputs'] },
      ),
    ).toMatch(/same seed/);
    expect(shardsProblem({ ...spec, total: 1 }, { outputs: ['outputs'] })).toMatch(/add up to 90000, not the total of 1/);
    expect(
      shardsProblem(
        { ...spec, merge: { ...spec.merge, fields: [{ name: 'estimate', how: 'weighted-mean', check: 'none' }] } },
        { outputs: ['outputs'] },
      ),
    ).toMatch(/needs `weight`/);
    expect(splitSizes(10, 3)).toEqual([4, 3, 3]);
  });
});

describe('proposing a sweep', () => {
  const sweep = `p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6])
p.add_argument("--out", default="outputs/sweep.json")
results = []
for s in a.seeds:
    rng = random.Random(s)
    results.append({"seed": s, "mean": rng.random()})
json.dump({"results": results, "count": len(results)}, open(a.out, "w"))
`;
  it('splits the list flag into contiguous slices, concatenates the per-item results and checks one item per shard exactly', () => {
    expect(sweepFlag(sweep)).toEqual({ flag: '--seeds', values: ['1', '2', '3', '4', '5', '6'] });
    const p = proposeSweep({
      source: sweep,
      runner: 'python sweep.py',
      args: ['--out', 'outputs/sweep.json'],
      flag: '--seeds',
      values: ['1', '2', '3', '4', '5', '6'],
      resultFile: 'outputs/sweep.json',
      workers: 2,
    });
    expect(p.spec!.shards.map((s) => s.command)).toEqual([
      'python sweep.py --out outputs/sweep.json --seeds 1 2 3',
      'python sweep.py --out outputs/sweep.json --seeds 4 5 6',
    ]);
    expect(p.spec!.check).toEqual({
      original: 'python sweep.py --out outputs/sweep.json --seeds 1 4',
      shards: ['python sweep.py --out outputs/sweep.json --seeds 1', 'python sweep.py --out outputs/sweep.json --seeds 4'],
      timeoutSec: 900,
    });
    expect(p.spec!.merge.fields).toEqual([
      { name: 'results', how: 'concat', check: 'exact' },
      { name: 'count', how: 'sum', check: 'exact' },
    ]);
    expect(shardsProblem(p.spec!, { outputs: ['outputs'] })).toBeNull();
  });
  it('does not split a sweep that keeps a running best, or whose result has no list', () => {
    const best = sweep.replace('    results.append', '    best = max(best, rng.random())\n    results.append');
    expect(
      proposeSweep({
        source: best,
        runner: 'python sweep.py',
        args: [],
        flag: '--seeds',
        values: ['1', '2'],
        resultFile: 'outputs/sweep.json',
        workers: 2,
      }).reason,
    ).toMatch(/^Not split into shards: the variable `best` is carried/);
    const noList = sweep.replace('{"results": results, "count": len(results)}', '{"count": len(results)}');
    expect(
      proposeSweep({
        source: noList,
        runner: 'python sweep.py',
        args: [],
        flag: '--seeds',
        values: ['1', '2'],
        resultFile: 'outputs/sweep.json',
        workers: 2,
      }).reason,
    ).toBe('Not split into shards: outputs/sweep.json has no list of per-item results to concatenate.');
  });
});
