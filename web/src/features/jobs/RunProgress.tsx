/**
 * The running full run's progress bar and ETA (progress.ts): step s of S, epoch e of E,
 * elapsed, about how long is left, cost so far against the expected. Redrawn each second
 * and whenever the run's or the smoke run's metrics grow.
 */
import { useEffect, useState } from 'react';
import { formatCad, formatDuration } from '../../lib/format';
import type { MetricStore } from '../metrics/MetricStore';
import { runProgress, type ProgressInput } from './progress';

export interface RunProgressProps {
  startedAt: string;
  runStore: MetricStore | null;
  smokeStore: MetricStore | null;
  estimate: ProgressInput['estimate'];
  costCad: number;
}

/** The last step any series of the store reached, and the epoch counter's last value. */
export function lastStepOf(store: MetricStore | null): { step: number | null; epoch: number | null } {
  if (!store) return { step: null, epoch: null };
  let step: number | null = null;
  let epoch: number | null = null;
  for (const s of store.series.values()) {
    const x = s.xs[s.xs.length - 1];
    if (/^(epoch|epochs)$/i.test(s.name)) epoch = s.ys[s.ys.length - 1] ?? epoch;
    if (x !== undefined && (step === null || x > step)) step = x;
  }
  return { step, epoch };
}

export function RunProgress({ startedAt, runStore, smokeStore, estimate, costCad }: RunProgressProps) {
  const [, tick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => tick((n) => n + 1), 1000);
    const offs = [runStore, smokeStore].map((s) => s?.subscribe(() => tick((n) => n + 1)));
    return () => {
      clearInterval(t);
      offs.forEach((off) => off?.());
    };
  }, [runStore, smokeStore]);

  const run = lastStepOf(runStore);
  const p = runProgress({
    elapsedSec: Math.max(0, (Date.now() - new Date(startedAt).getTime()) / 1000),
    step: run.step,
    epoch: run.epoch,
    smokeStep: lastStepOf(smokeStore).step,
    estimate,
  });
  const parts: string[] = [];
  if (p.step !== null) parts.push(p.totalSteps ? `step ${p.step} of ${p.totalSteps}` : `step ${p.step}`);
  if (p.epoch !== null) parts.push(p.totalEpochs ? `epoch ${p.epoch} of ${p.totalEpochs}` : `epoch ${p.epoch}`);
  parts.push(`${formatDuration(p.elapsedSec * 1000)} elapsed`);
  return (
    <div data-testid="progress" className="run-progress">
      <div className="spread small">
        <span>
          <strong>Run</strong> {parts.join(' · ')}
        </span>
        <span data-testid="eta">
          {p.remainingSec !== null
            ? `about ${formatDuration(p.remainingSec * 1000)} left${p.basis === 'time' ? ' (from the estimate)' : ''}`
            : 'no estimate yet'}
        </span>
      </div>
      <div
        className="progress"
        role="progressbar"
        aria-label="Progress of the run"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={p.fraction !== null ? Math.round(p.fraction * 100) : undefined}
        style={{ marginTop: 6 }}
      >
        <div style={{ width: `${(p.fraction ?? 0) * 100}%` }} />
      </div>
      <div className="muted small" style={{ marginTop: 4 }}>
        {formatCad(costCad)} so far{estimate ? ` of about ${formatCad(estimate.costCad)} expected` : ''}
        {p.fraction !== null ? ` · ${Math.round(p.fraction * 100)}%` : ''}
      </div>
    </div>
  );
}
