/**
 * The one number that tells two runs of a project apart in a list: the evaluation's result
 * when the job evaluated its checkpoint, else the run's last reported value — a quality
 * metric (accuracy, F1, AUC, score…) before a loss, never a progress counter (epoch, step,
 * learning rate). Pure: the tasks' stored results (`result.metrics`: each metric's last value,
 * as the worker reports it on completion) in, the metric out.
 */
export interface HeadlineMetric {
  name: string;
  value: number;
  /** 'evaluation' or 'run'. */
  source: string;
}

const QUALITY = /acc|f1|auc|score|bleu|rouge|map|precision|recall|iou|r2/i;
const LOSS = /loss|err|mse|mae|rmse|perplex/i;
const COUNTER = /^(epoch|epochs|step|steps|iter|iteration|lr|learning_rate|time|elapsed|samples)$/i;

export function headlineMetric(tasks: readonly { kind: string; result: unknown }[]): HeadlineMetric | null {
  for (const source of ['EVALUATE', 'RUN'] as const) {
    const metrics = tasks
      .filter((t) => t.kind === source)
      .flatMap((t) =>
        Object.entries(((t.result as { metrics?: Record<string, unknown> } | null)?.metrics ?? {}) as Record<string, unknown>),
      )
      .filter((e): e is [string, number] => typeof e[1] === 'number' && Number.isFinite(e[1]) && !COUNTER.test(e[0]));
    const pick = metrics.find(([n]) => QUALITY.test(n)) ?? metrics.find(([n]) => LOSS.test(n)) ?? metrics[0];
    if (pick) return { name: pick[0], value: pick[1], source: source === 'EVALUATE' ? 'evaluation' : 'run' };
  }
  return null;
}
