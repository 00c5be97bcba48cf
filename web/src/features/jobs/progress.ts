/**
 * How far the full run is and how long it has left, from the smoke run's estimate and the
 * run's own metrics (pure; the job page's progress bar and web/test/progress.test.ts).
 *
 *   - total steps: the smoke run's last step × full / bounded units (20 epochs for its 2);
 *   - done: the run's last step over that, else its epoch counter over the full epochs,
 *     else its elapsed time over the estimate (a guess, said so);
 *   - remaining: elapsed × (1 − done) / done once there is progress to go by (start-up
 *     included, so on the safe side), else the estimate minus what has elapsed.
 */
export interface ProgressInput {
  elapsedSec: number;
  /** The run's last reported step and epoch (null when it reported none). */
  step: number | null;
  epoch: number | null;
  /** The smoke run's last reported step. */
  smokeStep: number | null;
  estimate: { durationSec: number; costCad: number; unit?: string | null; boundedUnits?: number | null; fullUnits?: number | null } | null;
}

export interface Progress {
  /** 0…1 */
  fraction: number | null;
  step: number | null;
  totalSteps: number | null;
  epoch: number | null;
  totalEpochs: number | null;
  elapsedSec: number;
  remainingSec: number | null;
  /** What the fraction comes from. */
  basis: 'steps' | 'epochs' | 'time' | null;
}

export function runProgress(p: ProgressInput): Progress {
  const e = p.estimate;
  const factor = e?.boundedUnits && e.fullUnits ? e.fullUnits / e.boundedUnits : null;
  const totalSteps = factor && p.smokeStep ? Math.round(p.smokeStep * factor) : null;
  const totalEpochs = e?.unit === 'epoch' && e.fullUnits ? e.fullUnits : null;
  let fraction: number | null = null;
  let basis: Progress['basis'] = null;
  if (totalSteps && p.step !== null) {
    fraction = p.step / totalSteps;
    basis = 'steps';
  } else if (totalEpochs && p.epoch !== null) {
    fraction = p.epoch / totalEpochs;
    basis = 'epochs';
  } else if (e && e.durationSec > 0) {
    fraction = Math.min(0.99, p.elapsedSec / e.durationSec);
    basis = 'time';
  }
  if (fraction !== null) fraction = Math.max(0, Math.min(1, fraction));
  let remainingSec: number | null = null;
  if (basis === 'steps' || basis === 'epochs') {
    remainingSec = fraction! > 0 ? (p.elapsedSec * (1 - fraction!)) / fraction! : e ? Math.max(0, e.durationSec - p.elapsedSec) : null;
  } else if (e) remainingSec = Math.max(0, e.durationSec - p.elapsedSec);
  return { fraction, step: p.step, totalSteps, epoch: p.epoch, totalEpochs, elapsedSec: p.elapsedSec, remainingSec, basis };
}
