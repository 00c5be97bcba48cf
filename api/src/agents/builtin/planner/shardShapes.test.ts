import { describe, expect, it } from 'vitest';
import { shardsProblem } from '../../../domain/jobs/shards.js';
import {
  literalCount,
  loopCarriesState,
  proposeBatch,
  proposeDriver,
  proposeRanges,
  readMergeScript,
  topLevelLoop,
  unitSeconds,
} from './shardShapes.js';
import { costGain, proposeShards, proposeSweep } from './proposeShards.js';

describe('the shapes of divisible work', () => {
  const PROCESS =
    'import os\nfor name in sorted(os.listdir(a.input_dir)):\n    text = open(name).read()\n    open(out, "w").write(text.upper())\n';
  it('a batch of files: slices through chatgpu.shard, the union of outputs, checked one file per shard', () => {
    const p = proposeBatch({
      source: PROCESS,
      command: 'python p.py --out outputs',
      inputs: { kind: 'files', path: 'data', count: 7 },
      result: { kind: 'files', file: 'outputs/' },
      mergeScript: null,
      workers: 3,
    });
    expect(p.spec!.shards.map((s) => s.range)).toEqual([
      [0, 3],
      [3, 5],
      [5, 7],
    ]);
    expect(p.spec!.check.shards).toEqual(
      ['0 1', '1 2', '2 3'].map((r) => `python -m chatgpu.shard files data ${r} && python p.py --out outputs`),
    );
    expect(shardsProblem(p.spec!, { outputs: ['outputs'] })).toBeNull();
    // The shards must cover the inputs once, in order.
    const gap = { ...p.spec!, shards: p.spec!.shards.map((s, i) => (i === 1 ? { ...s, range: [4, 5] } : s)) };
    expect(shardsProblem(gap, { outputs: ['outputs'] })).toMatch(
      /Shard 2's range \[4, 5\) does not start where the previous one ended \(3\)/,
    );
    expect(shardsProblem({ ...p.spec!, merge: { ...p.spec!.merge, kind: 'rows' } }, { outputs: ['outputs'] })).toMatch(
      /is not a \.csv file/,
    );
    expect(shardsProblem({ ...p.spec!, merge: { ...p.spec!.merge, kind: 'script' } }, { outputs: ['outputs'] })).toMatch(/needs `script`/);
  });
  it('refuses a batch with no result, with one worker, or too small to pay for its check — and says why', () => {
    const base = {
      source: PROCESS,
      command: 'python p.py',
      inputs: { kind: 'files' as const, path: 'data', count: 4 },
      result: { kind: 'files' as const, file: 'outputs/' },
      mergeScript: null,
    };
    expect(proposeBatch({ ...base, workers: 3 }).reason).toBe(
      'Not split into shards: it does not pay: the check costs about 4 files of wall time (3 unsharded, the same in 3 shards beside it) and 3 shards save about 2.67 of the 4 (the time of one file is not known, so the ~10 s overhead of each round of tasks is not weighed).',
    );
    expect(proposeBatch({ ...base, workers: 1 }).reason).toBe('Not split into shards: 1 compatible worker online, so one run is as fast.');
    expect(proposeBatch({ ...base, result: null, workers: 3 }).reason).toBe(
      'Not split into shards: the program writes no result under outputs/ to merge.',
    );
    expect(
      proposeBatch({
        ...base,
        source: 'json.dump({"files": n, "longest": w}, f)',
        result: { kind: 'json', file: 'outputs/s.json' },
        inputs: { ...base.inputs, count: 30 },
        workers: 3,
      }).reason,
    ).toMatch(/no merge rule is known for the result field `longest`/);
  });
  it('weighs the overhead when the time of a unit is known', () => {
    expect(unitSeconds('each file takes about 2 seconds', 100)).toBe(2);
    expect(unitSeconds('it takes about 3 minutes', 60)).toBe(3);
    expect(unitSeconds('upper-case them', 10)).toBeNull();
    expect(costGain({ total: 30, bounded: 3, shards: 3, workers: 3, unit: 'file', unitSec: 0.1 })).toMatchObject({ ok: false });
    expect(costGain({ total: 30, bounded: 3, shards: 3, workers: 3, unit: 'file', unitSec: 10 }).ok).toBe(true);
    expect(costGain({ total: 30, bounded: 3, shards: 3, workers: 3, unit: 'file', unitSec: 0.1 }).words).toMatch(
      /2 rounds of task overhead \(~10 s each\) cost ~20\.4 s; 3 shards save ~2 s/,
    );
  });
  it('the sample count and the sweep weigh their check too: a run whose time the request gives is not split when the overhead outweighs the gain', () => {
    const pi =
      'hits = 0\nfor _ in range(n):\n    hits += rng.random() < 0.5\njson.dump({"estimate": e, "stderr": s, "samples": n, "hits": hits}, f)';
    const mc = {
      source: pi,
      runner: 'python pi.py',
      args: [],
      countFlag: '--samples',
      seedFlag: '--seed',
      total: 60000,
      baseSeed: 1,
      resultFile: 'outputs/r.json',
      workers: 3,
    };
    expect(proposeShards(mc).spec).not.toBeNull();
    expect(proposeShards({ ...mc, unitSec: 1e-6 }).reason).toMatch(
      /^Not split into shards: it does not pay: the check \(8000 samples of wall time, ~0\.008 s\) and 2 rounds of task overhead \(~10 s each\) cost ~20 s; 3 shards save ~0\.04 s/,
    );
    const sw = {
      source: 'results = []\njson.dump({"results": results}, f)',
      runner: 'python s.py',
      args: [],
      flag: '--seeds',
      values: ['1', '2', '3', '4', '5', '6'],
      resultFile: 'outputs/s.json',
      workers: 3,
    };
    expect(proposeSweep(sw).spec).not.toBeNull();
    expect(proposeSweep({ ...sw, values: ['1', '2', '3', '4'] }).reason).toMatch(
      /^Not split into shards: it does not pay: the check costs about 4 items/,
    );
  });
  it('reads a merge script that takes result files and an output flag, and says why not otherwise', () => {
    const ok = readMergeScript('merge.py', 'p.add_argument("parts", nargs="+")\np.add_argument("-o", "--out")\n');
    expect(ok.script!.command(['a.json', 'b.json'], 'outputs/m.json')).toBe('python merge.py --out outputs/m.json a.json b.json');
    expect(readMergeScript('merge.py', 'import sys\nfiles = sys.argv[1:]\n').why).toBe(
      "merge.py does not take a list of result files (a positional argument with nargs='+') and an output flag (--out / -o), so it cannot be given the shards' results",
    );
  });
  it('an evaluation over index ranges: counts summed, means weighted and checked close', () => {
    const source = 'json.dump({"n": n, "correct": c, "accuracy": c / n, "seed": 1}, f)';
    const base = {
      source,
      runner: 'python acc.py',
      args: ['--out', 'outputs/e.json'],
      startFlag: '--start',
      endFlag: '--end',
      total: 100,
      resultFile: 'outputs/e.json',
      mergeScript: null,
      workers: 2,
    };
    expect(proposeRanges(base).reason).toBe('Not split into shards: no merge rule is known for the result field `seed` of outputs/e.json.');
    const p = proposeRanges({ ...base, source: source.replace(', "seed": 1', '') });
    expect(p.spec!.shards.map((s) => s.command)).toEqual([
      'python acc.py --out outputs/e.json --start 0 --end 50',
      'python acc.py --out outputs/e.json --start 50 --end 100',
    ]);
    expect(p.spec!.merge.fields.find((f) => f.name === 'accuracy')).toEqual({
      name: 'accuracy',
      how: 'weighted-mean',
      weight: 'n',
      check: 'close',
    });
    expect(proposeRanges({ ...base, source: 'json.dump({"accuracy": a}, f)' }).reason).toMatch(/reports no example count/);
  });
  it('finds a top-level loop over a literal, runs it through the driver, and refuses one that carries state', () => {
    expect(literalCount('[{"a": [1, 2]}, {"a": 3}, "x,y"]')).toBe(3);
    expect(literalCount('range(3, 9)')).toBe(6);
    expect(literalCount('configs()')).toBeNull();
    const src =
      'import json\ndef f(c):\n    return c * 2\nCFG = [\n    1,\n    2,\n    3,\n    4,\n    5,\n    6,\n]\nout = []\nif __name__ == "__main__":\n    for c in CFG:\n        out.append(f(c))\n    json.dump(out, open("outputs/o.json", "w"))\n';
    const loop = topLevelLoop(src)!;
    expect(loop).toMatchObject({ line: 14, target: 'c', count: 6 });
    expect(loopCarriesState(src, loop)).toBeNull();
    const p = proposeDriver({ path: 's.py', source: src, args: [], resultFile: 'outputs/o.json', mergeScript: null, workers: 3 });
    expect(p.spec!.shards.map((s) => s.command)).toEqual(['0 2', '2 4', '4 6'].map((r) => `python -m chatgpu.shard loop s.py 14 ${r}`));
    expect(p.spec!.merge).toEqual({ kind: 'list', file: 'outputs/o.json', fields: [] });
    const total = src
      .replace('out = []', 'out = []\ntotal = 0')
      .replace('        out.append(f(c))', '        total += f(c)\n        out.append(total)');
    expect(
      proposeDriver({ path: 's.py', source: total, args: [], resultFile: 'outputs/o.json', mergeScript: null, workers: 3 }).reason,
    ).toBe(
      'Not split into shards: the variable `total` is set before the loop and updated in it (`total += f(c)`), so each item depends on the ones before (the loop on line 15 of s.py).',
    );
    const global = src.replace('    return c * 2', '    global seen\n    return c * 2');
    expect(
      proposeDriver({ path: 's.py', source: global, args: [], resultFile: 'outputs/o.json', mergeScript: null, workers: 3 }).reason,
    ).toMatch(/a function declares `seen` global/);
    expect(proposeDriver({ path: 's.py', source: 'x = 1\n', args: [], resultFile: null, mergeScript: null, workers: 3 }).reason).toBe(
      'Not split into shards: s.py has no top-level loop over a literal list or range to split.',
    );
  });
});
