import { describe, expect, it } from 'vitest';
import { buildCharts, decimate, epochMarks, familyOf, metricSourcesOf, niceTicks } from '../src/features/metrics/chartModel';
import { MetricStore } from '../src/features/metrics/MetricStore';

const steps = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('the Metrics panel model', () => {
  it('groups names into families, keeps epoch off the charts as marks, and puts evaluation values in a table', () => {
    const { charts, evals } = buildCharts([
      {
        attemptId: 's',
        label: 'smoke run',
        role: 'smoke',
        series: [{ name: 'loss', xs: [1, 2], ys: [1, 0.8] }],
      },
      {
        attemptId: 'r',
        label: 'run',
        role: 'run',
        series: [
          { name: 'loss', xs: steps(4), ys: [1, 0.5, 0.3, 0.2] },
          { name: 'val_loss', xs: [2, 4], ys: [0.6, 0.4] },
          { name: 'accuracy', xs: steps(4), ys: [0.5, 0.7, 0.8, 0.9] },
          { name: 'epoch', xs: steps(4), ys: [1, 1, 2, 2] },
          { name: 'test_accuracy', xs: [4], ys: [0.88] },
        ],
      },
      { attemptId: 'e', label: 'evaluate', role: 'eval', series: [{ name: 'eval_accuracy', xs: [0], ys: [0.91] }] },
    ]);
    expect(charts.map((c) => c.family)).toEqual(['loss', 'accuracy']);
    expect(charts.map((c) => c.xLabel)).toEqual(['step', 'step']);
    const loss = charts[0]!;
    // The run's lines first, then the smoke run's; names are told apart within a family.
    expect(loss.lines.map((l) => [l.label, l.role, l.xs.length])).toEqual([
      ['run · loss', 'run', 4],
      ['run · val_loss', 'run', 2],
      ['smoke run · loss', 'smoke', 2],
    ]);
    expect(loss.epochs).toEqual([
      { x: 1, epoch: 1 },
      { x: 3, epoch: 2 },
    ]);
    expect(charts.some((c) => c.family === 'epoch')).toBe(false);
    expect(evals).toEqual([
      { name: 'test_accuracy', value: 0.88, source: 'run', step: 4 },
      { name: 'eval_accuracy', value: 0.91, source: 'evaluate', step: null },
    ]);
  });

  it('puts the epoch on the x axis when the program logged per epoch without steps', () => {
    // log(epoch=e, loss=…) with no step: the store's xs are the lines' seqs (7, 8, 9).
    const { charts } = buildCharts([
      {
        attemptId: 'r',
        label: 'run',
        role: 'run',
        series: [
          { name: 'loss', xs: [7, 8, 9], ys: [0.9, 0.5, 0.3], stepless: true },
          { name: 'epoch', xs: [7, 8, 9], ys: [1, 2, 3], stepless: true },
        ],
      },
    ]);
    expect(charts).toHaveLength(1);
    expect(charts[0]).toMatchObject({ family: 'loss', xLabel: 'epoch', epochs: [] });
    expect(charts[0]!.lines[0]!.xs).toEqual([1, 2, 3]);
    // The store says which series came without steps.
    const store = new MetricStore(async () => [], 100);
    store.push([
      { seq: 0, name: 'loss', step: null, value: 1 },
      { seq: 0, name: 'epoch', step: null, value: 1 },
      { seq: 1, name: 'acc', step: 5, value: 0.5 },
    ]);
    expect([...store.series.values()].map((x) => [x.name, x.stepless, x.xs])).toEqual([
      ['loss', true, [0]],
      ['epoch', true, [0]],
      ['acc', false, [5]],
    ]);
  });

  it('names families without their split prefix', () => {
    expect(['loss', 'train_loss', 'val/loss', 'Validation-Loss', 'lr', 'eval_accuracy'].map(familyOf)).toEqual([
      'loss',
      'loss',
      'loss',
      'loss',
      'lr',
      'accuracy',
    ]);
    expect(epochMarks({ name: 'epoch', xs: [10, 20, 30], ys: [1, 2, 2] })).toEqual([
      { x: 10, epoch: 1 },
      { x: 20, epoch: 2 },
    ]);
  });

  it('takes the smoke run, runs, shards and the evaluation that started, labels retries, and leaves preparation out', () => {
    const a = (id: string, number: number, started = true) => ({ id, number, startedAt: started ? '2026-12-07T00:00:00Z' : null });
    expect(
      metricSourcesOf([
        { kind: 'REFERENCE', role: 'REFERENCE', name: 'reference', attempts: [a('ref', 1)] },
        { kind: 'PROBE', role: 'SMOKE', name: 'smoke', attempts: [a('s1', 1)] },
        { kind: 'PROBE', role: 'REPLICA', name: 'replica:run', attempts: [a('rep', 1)] },
        { kind: 'RUN', role: 'RUN', name: 'run', attempts: [a('r1', 1), a('r2', 2), a('r3', 3, false)] },
        { kind: 'SHARD', role: 'SHARD', name: 'shard-001', attempts: [a('sh', 1)] },
        { kind: 'EVALUATE', role: 'EVALUATE', name: 'evaluate', attempts: [a('ev', 1)] },
      ]),
    ).toEqual([
      { attemptId: 'r1', role: 'run', label: 'run #1' },
      { attemptId: 'r2', role: 'run', label: 'run #2' },
      { attemptId: 'sh', role: 'shard', label: 'shard-001' },
      { attemptId: 's1', role: 'smoke', label: 'smoke run' },
      { attemptId: 'ev', role: 'eval', label: 'evaluate' },
    ]);
  });

  it('draws every point up to the limit, and beyond it keeps each bucket’s extremes', () => {
    const xs = steps(100_000);
    const ys = xs.map((x) => (x === 54_321 ? 99 : Math.sin(x / 1000)));
    expect(decimate(xs.slice(0, 500), ys.slice(0, 500))[0]).toHaveLength(500);
    const [dx, dy] = decimate(xs, ys, 2000);
    expect(dx.length).toBeLessThanOrEqual(2000);
    expect(dy).toContain(99);
    expect(dx[0]).toBe(1);
    expect(dx.at(-1)).toBe(100_000);
    expect(niceTicks(0, 1, 4)).toEqual([0, 0.25, 0.5, 0.75, 1]);
  });
});
