/** What `submit --wait`, `watch` and `logs` print for metrics: one compact progress line, never JSON. */
import { describe, expect, it } from 'vitest';
import { formatLogLine } from './follow.js';
import { metricLineText, progressLine, totalStepsOf } from './progress.js';

describe('progress lines', () => {
  it("says how far the run is, against the smoke run's steps scaled to the full run, and about how long is left", () => {
    const total = totalStepsOf(10, { boundedUnits: 2, fullUnits: 20 });
    expect(total).toBe(100);
    const points = [
      { name: 'loss', step: 24, value: 0.05 },
      { name: 'loss', step: 25, value: 0.0412345 },
      { name: 'accuracy', step: 25, value: 0.96 },
      { name: 'epoch', step: 25, value: 3 },
    ];
    expect(progressLine(points, { task: 'run', totalSteps: total, totalEpochs: 20, elapsedSec: 12, estimateSec: 40 })).toBe(
      '∿ run · step 25/100 (25%): loss=0.041235 accuracy=0.96 · epoch 3/20 · 12 s elapsed, about 36 s left',
    );
    // Without a total: the estimate against the time elapsed; without either, the values alone.
    expect(progressLine([{ name: 'loss', step: 1, value: 0.5 }], { task: 'run', elapsedSec: 10, estimateSec: 40 })).toBe(
      '∿ run · step 1: loss=0.5 · 10 s elapsed, about 30 s left',
    );
    expect(progressLine([{ name: 'loss', step: 1, value: 0.5 }])).toBe('∿ step 1: loss=0.5');
    expect(progressLine([{ name: 'eval_accuracy', step: null, value: 0.975 }], { task: 'evaluate' })).toBe(
      '∿ evaluate: eval_accuracy=0.975',
    );
    expect(totalStepsOf(null, { boundedUnits: 2, fullUnits: 20 })).toBeNull();
  });

  it('turns a raw CHATGPU_METRIC line into the same compact line (chatgpu logs), and leaves other lines alone', () => {
    const raw = 'CHATGPU_METRIC {"step":2,"values":{"loss":0.41,"accuracy":0.801,"epoch":2}}';
    expect(metricLineText(raw)).toBe('∿ step 2: loss=0.41 accuracy=0.801 · epoch 2');
    expect(formatLogLine({ seq: 1, stream: 'stdout', text: raw })).toBe('∿ step 2: loss=0.41 accuracy=0.801 · epoch 2');
    expect(metricLineText('CHATGPU_METRIC not json')).toBeNull();
    expect(formatLogLine({ seq: 2, stream: 'stdout', text: 'CHATGPU_METRIC not json' })).toBe('CHATGPU_METRIC not json');
    expect(formatLogLine({ seq: 3, stream: 'stdout', text: 'epoch 2/2: loss 0.41' })).toBe('epoch 2/2: loss 0.41');
  });
});
