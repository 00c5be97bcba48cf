import { describe, expect, it } from 'vitest';
import { checkMerged, mergeResults, type MergeField } from './shards.js';

const FIELDS: MergeField[] = [
  { name: 'estimate', how: 'weighted-mean', weight: 'samples', stderr: 'stderr', check: 'within-k-se' },
  { name: 'stderr', how: 'combined-stderr', weight: 'samples', check: 'none' },
  { name: 'samples', how: 'sum', check: 'exact' },
  { name: 'hits', how: 'sum', check: 'none' },
];

describe('merging shards', () => {
  it('weights estimates by their sample counts, combines standard errors, sums counts, concatenates lists', () => {
    const m = mergeResults(
      [...FIELDS, { name: 'rows', how: 'concat', check: 'exact' }],
      [
        { estimate: 3.0, stderr: 0.2, samples: 100, hits: 75, rows: [1] },
        { estimate: 3.3, stderr: 0.1, samples: 300, hits: 248, rows: [2, 3] },
      ],
    );
    expect(m.estimate).toBeCloseTo((3.0 * 100 + 3.3 * 300) / 400, 12);
    expect(m.stderr).toBeCloseTo(Math.sqrt(100 ** 2 * 0.04 + 300 ** 2 * 0.01) / 400, 12);
    expect(m).toMatchObject({ samples: 400, hits: 323, rows: [1, 2, 3] });
  });
  it('says which shard lacks a field', () => {
    expect(() =>
      mergeResults(FIELDS, [
        { estimate: 3, stderr: 0.1, samples: 10, hits: 1 },
        { estimate: 3, samples: 10, hits: 1 },
      ]),
    ).toThrow("shard 2's result has no number stderr");
  });
  it('checks counts exactly and estimates within k combined standard errors, in words', () => {
    const spec = { merge: { file: 'outputs/result.json', fields: FIELDS, k: 4 } };
    const orig = { estimate: 3.14, stderr: 0.01, samples: 400, hits: 314 };
    expect(checkMerged(spec, { estimate: 3.17, stderr: 0.01, samples: 400, hits: 317 }, orig).ok).toBe(true);
    const far = checkMerged(spec, { estimate: 3.3, stderr: 0.01, samples: 400, hits: 330 }, orig);
    expect(far.ok).toBe(false);
    expect(far.report).toMatch(/estimate: merged 3\.3 vs unsharded 3\.14, \|Δ\| 0\.16 > 4 combined standard errors \(0\.0565685\)/);
    const wrongCount = checkMerged(spec, { estimate: 3.14, stderr: 0.01, samples: 100, hits: 314 }, orig);
    expect(wrongCount.ok).toBe(false);
    expect(wrongCount.report).toContain('samples: merged 100 ≠ unsharded 400 (exact)');
  });
});
