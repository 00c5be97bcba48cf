import { describe, expect, it } from 'vitest';
import { analyzeProject, reportedMetrics } from './analyzeProject.js';

describe('reportedMetrics', () => {
  it('names the keywords passed to the metrics helper, not step/ts, in order of first appearance', () => {
    const text = 'from chatgpu.metrics import log\nlog(step=s, loss=l, accuracy=a)\nlog(val_loss=v, loss=l2)\n';
    expect(reportedMetrics(text)).toEqual(['loss', 'accuracy', 'val_loss']);
  });

  it('reads chatgpu.metrics.log(...) and ignores an unrelated log() when the helper is not imported', () => {
    expect(reportedMetrics('import chatgpu.metrics\nchatgpu.metrics.log(eval_accuracy=acc)\n')).toEqual(['eval_accuracy']);
    expect(reportedMetrics('import logging\nlog = logging.info\nlog(msg="x")\nmath.log(x)\n')).toEqual([]);
    expect(reportedMetrics('from chatgpu.metrics import log\nmath.log(x)\nnp.log(y)\n')).toEqual([]);
  });

  it('is recorded for each entry point', () => {
    const facts = analyzeProject(new Map([['evaluate.py', 'import argparse\nfrom chatgpu.metrics import log\nif __name__ == "__main__":\n    log(eval_accuracy=1.0, eval_loss=0.1)\n']]));
    expect(facts.entryPoints[0]!.reportsMetrics).toEqual(['eval_accuracy', 'eval_loss']);
  });
});
