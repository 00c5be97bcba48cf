/**
 * The `∿` line `submit --wait` and `watch` print for a batch of metric points, and what
 * `chatgpu logs` prints for a raw `CHATGPU_METRIC {json}` line: one compact progress line
 * instead of JSON. For the full run it says how far it is and about how long is left, from
 * the smoke run's estimate and the run's own metrics (the job page's progress bar counts
 * the same way: web/src/features/jobs/progress.ts; the schema is the only thing api and web
 * share, so the dozen lines are written twice):
 *
 *   ∿ run · step 25/100 (25%): loss=0.041 accuracy=0.96 · epoch 1/20 · 12s elapsed, about 36s left
 */
import { duration, metricValue, oneLine } from './format.js';

export interface MetricPointLike {
  name: string;
  step?: number | null;
  value: number;
}

export interface ProgressContext {
  /** "run", "smoke run", "shard-002": printed before the step when given. */
  task?: string;
  /** The run's total steps: the smoke run's last step × full / bounded units. */
  totalSteps?: number | null;
  /** The full run's epochs when the plan scales by epochs. */
  totalEpochs?: number | null;
  /** Since the attempt started; with an estimate, what is left is projected. */
  elapsedSec?: number | null;
  estimateSec?: number | null;
}

const EPOCH = /^(epoch|epochs)$/i;

/** The total steps of the full run from the smoke run's last step and the plan's scale; null when unknown. */
export function totalStepsOf(
  smokeStep: number | null | undefined,
  estimate: { boundedUnits?: number | null; fullUnits?: number | null } | null | undefined,
): number | null {
  if (!smokeStep || !estimate?.boundedUnits || !estimate.fullUnits) return null;
  return Math.round((smokeStep * estimate.fullUnits) / estimate.boundedUnits);
}

/** One line for a batch of points: the values at its last step (earlier steps of the batch are in the charts). */
export function progressLine(points: readonly MetricPointLike[], ctx: ProgressContext = {}): string | null {
  if (points.length === 0) return null;
  let step: number | null = null;
  for (const p of points) if (p.step !== null && p.step !== undefined && (step === null || p.step > step)) step = p.step;
  const at = points.filter((p) => (p.step ?? null) === step);
  const values = new Map<string, number>();
  for (const p of at) values.set(p.name, p.value);
  let epoch: number | null = null;
  for (const p of points) if (EPOCH.test(p.name)) epoch = p.value;

  const head: string[] = [];
  if (ctx.task) head.push(ctx.task);
  let fraction: number | null = null;
  if (step !== null) {
    if (ctx.totalSteps) {
      fraction = Math.min(1, step / ctx.totalSteps);
      head.push(`step ${step}/${ctx.totalSteps} (${Math.round(fraction * 100)}%)`);
    } else head.push(`step ${step}`);
  }
  const shown = [...values].filter(([n]) => !EPOCH.test(n)).map(([n, v]) => `${n}=${metricValue(v)}`);
  const tail: string[] = [];
  if (epoch !== null) {
    tail.push(ctx.totalEpochs ? `epoch ${metricValue(epoch)}/${ctx.totalEpochs}` : `epoch ${metricValue(epoch)}`);
    if (fraction === null && ctx.totalEpochs) fraction = Math.min(1, epoch / ctx.totalEpochs);
  }
  if (ctx.elapsedSec !== null && ctx.elapsedSec !== undefined) {
    let left: number | null = null;
    if (fraction !== null && fraction > 0) left = (ctx.elapsedSec * (1 - fraction)) / fraction;
    else if (ctx.estimateSec) left = Math.max(0, ctx.estimateSec - ctx.elapsedSec);
    tail.push(`${duration(ctx.elapsedSec)} elapsed${left !== null ? `, about ${duration(left)} left` : ''}`);
  }
  const body = `${head.join(' · ')}${head.length && shown.length ? ': ' : ''}${shown.join(' ')}`;
  return oneLine(`∿ ${[body, ...tail].filter(Boolean).join(' · ')}`, 220);
}

/** A raw `CHATGPU_METRIC {"step":1,"values":{…}}` line as a progress line; null for any other line. */
export function metricLineText(text: string): string | null {
  if (!text.startsWith('CHATGPU_METRIC ')) return null;
  try {
    const m = JSON.parse(text.slice('CHATGPU_METRIC '.length)) as { step?: unknown; values?: Record<string, unknown> };
    if (!m || typeof m !== 'object' || !m.values || typeof m.values !== 'object') return null;
    const step = typeof m.step === 'number' ? m.step : null;
    const points = Object.entries(m.values)
      .filter(([, v]) => typeof v === 'number')
      .map(([name, v]) => ({ name, step, value: v as number }));
    return progressLine(points);
  } catch {
    return null;
  }
}
