import { describe, expect, it } from 'vitest';
import { headlineMetric } from './headlineMetric.js';

describe('headlineMetric', () => {
  it("is the evaluation's quality metric, else the run's (quality before loss, never a counter)", () => {
    expect(
      headlineMetric([
        { kind: 'RUN', result: { metrics: { epoch: 20, loss: 0.1, accuracy: 0.95 } } },
        { kind: 'EVALUATE', result: { metrics: { eval_accuracy: 0.975 } } },
      ]),
    ).toEqual({ name: 'eval_accuracy', value: 0.975, source: 'evaluation' });
    expect(headlineMetric([{ kind: 'RUN', result: { metrics: { epoch: 20, lr: 0.001, loss: 0.1 } } }])).toEqual({
      name: 'loss',
      value: 0.1,
      source: 'run',
    });
    expect(
      headlineMetric([
        { kind: 'RUN', result: { metrics: { epoch: 20 } } },
        { kind: 'PROBE', result: { metrics: { accuracy: 1 } } },
      ]),
    ).toBeNull();
    expect(headlineMetric([{ kind: 'RUN', result: null }])).toBeNull();
  });
});
