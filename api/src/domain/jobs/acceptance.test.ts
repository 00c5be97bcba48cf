import { describe, expect, it } from 'vitest';
import { checkEvaluation, checkMetrics, checkRun, summarizeMetrics, type Criteria } from './acceptance.js';

const base: Criteria = { exitCode: 0, requiredFiles: ['outputs/model.pt'], metrics: [], evaluate: null };

describe('checkRun', () => {
  it('passes a run that exited as required and produced every required file', () => {
    expect(checkRun(base, { exitCode: 0, outputs: [{ path: 'outputs/model.pt' }] })).toEqual([]);
  });

  it('names the wrong exit code and each missing file', () => {
    const problems = checkRun(
      { ...base, requiredFiles: ['outputs/model.pt', 'outputs/log.csv'] },
      { exitCode: 3, outputs: [{ path: 'outputs/model.pt' }] },
    );
    expect(problems).toEqual(['the exit code was 3, not 0', 'the required file outputs/log.csv was not produced']);
  });

  it('a required folder (an output the user asked for, e.g. outputs/figures/) must hold at least one file', () => {
    const c: Criteria = { ...base, requiredFiles: ['outputs/figures/'] };
    expect(checkRun(c, { exitCode: 0, outputs: [{ path: 'outputs/figures/figure-1.png' }] })).toEqual([]);
    expect(checkRun(c, { exitCode: 0, outputs: [{ path: 'outputs/figures.png' }, { path: 'outputs/model.pt' }] })).toEqual([
      'the required folder outputs/figures/ holds no file',
    ]);
  });

  it('a missing exit code counts as 0 (a success the worker reported without one)', () => {
    expect(checkRun(base, { outputs: [{ path: 'outputs/model.pt' }] })).toEqual([]);
  });

  it('requires the checkpoint that the evaluation reloads, even when it is not listed as required', () => {
    const c: Criteria = { ...base, requiredFiles: [], evaluate: { checkpoint: 'outputs/ckpt.pt', command: 'python eval.py' } };
    expect(checkRun(c, { exitCode: 0, outputs: [] })).toEqual([
      'the checkpoint outputs/ckpt.pt was not produced, so it cannot be evaluated',
    ]);
  });

  it('checks metric thresholds on the last reported values', () => {
    const c: Criteria = { ...base, requiredFiles: [], metrics: [{ name: 'loss', op: '<', value: 0.5 }] };
    expect(checkRun(c, { metrics: { loss: 0.4 } })).toEqual([]);
    expect(checkRun(c, { metrics: { loss: 0.61234 } })).toEqual(['loss was 0.6123, the criterion is < 0.5']);
    expect(checkRun(c, { metrics: {} })).toEqual(['the metric loss was never reported']);
  });
});

describe('checkMetrics', () => {
  it('applies each operator at its boundary', () => {
    const at = (op: '<' | '<=' | '>' | '>=') => checkMetrics([{ name: 'm', op, value: 1 }], { m: 1 }).length === 0;
    expect({ '<': at('<'), '<=': at('<='), '>': at('>'), '>=': at('>=') }).toEqual({ '<': false, '<=': true, '>': false, '>=': true });
  });

  it('a NaN or infinite value never meets a threshold', () => {
    expect(checkMetrics([{ name: 'acc', op: '>', value: 0.5 }], { acc: Number.NaN })).toEqual(['the metric acc was NaN']);
    expect(checkMetrics([{ name: 'loss', op: '<', value: 1 }], { loss: Number.NEGATIVE_INFINITY })).toEqual([
      'the metric loss was -Infinity',
    ]);
  });
});

describe('checkEvaluation', () => {
  const c: Criteria = {
    ...base,
    evaluate: {
      checkpoint: 'outputs/model.pt',
      command: 'python evaluate.py',
      metrics: [{ name: 'accuracy', op: '>=', value: 0.9 }],
      reports: ['accuracy', 'loss'],
    },
  };

  it('passes when every reported metric is there and every threshold is met', () => {
    expect(checkEvaluation(c, { exitCode: 0, metrics: { accuracy: 0.93, loss: 0.2 } })).toEqual([]);
  });

  it('fails when the evaluation misses a threshold or never reports a metric it should print', () => {
    expect(checkEvaluation(c, { exitCode: 0, metrics: { accuracy: 0.5 } })).toEqual([
      'the evaluation never reported loss',
      'accuracy was 0.5, the criterion is >= 0.9',
    ]);
  });

  it('a metric with a threshold that is missing is reported once, as missing', () => {
    expect(checkEvaluation(c, { exitCode: 0, metrics: { loss: 0.1 } })).toEqual(['the metric accuracy was never reported']);
  });

  it('a plan without an evaluation step cannot pass an evaluation', () => {
    expect(checkEvaluation(base, { exitCode: 0, metrics: {} })).toEqual(['the plan has no evaluation step']);
  });
});

describe('summarizeMetrics', () => {
  it('rounds to four significant digits and keeps the first few', () => {
    expect(summarizeMetrics({ accuracy: 0.931234, loss: 0.2, a: 1, b: 2 }, 2)).toBe('accuracy 0.9312, loss 0.2');
  });
});
