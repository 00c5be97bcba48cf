/**
 * The estimate of a full run from its smoke run (docs/architecture.md §4, "Smoke run"): what
 * the bounded workload measured on the class of worker the full run will use, scaled to the
 * full workload by the plan's `scale` (1 of 20 epochs).
 *
 * The time model: start-up + work that scales + a tail.
 *   - With progress metrics (two or more points of one metric with steps): the rate per
 *     step is their slope; start-up is what precedes the first point beyond its own steps;
 *     the tail is what follows the last point (saving, a final evaluation). The full run
 *     does last-step × full/bounded steps at that rate. Range: ×0.8 … ×1.25 of the scaled part.
 *   - Without: the whole smoke run scales (start-up included), so the point is an upper
 *     bound; the range goes down to the smoke run itself.
 * Cost: the duration priced like usage (billing/usage.ts: reservation on the smoke run's
 * worker at the configured rates).
 *
 * After the full run, `withActual` adds how long it really took and how far off the estimate
 * was; both are on the job (Job.estimate) for the job page and the CLI.
 */
import type { Resources } from '../resources.js';
import { priceInterval, reservationOf } from '../billing/usage.js';
import type { SmokeRun } from './planSchema.js';
import { fmt } from './estimateText.js';

export { describeEstimate, fmt } from './estimateText.js';

export interface Estimate {
  source: 'smoke run' | 'preparation run';
  /** One sentence: what was measured, on what, and how it was scaled. */
  basis: string;
  durationSec: number;
  lowSec: number;
  highSec: number;
  costCad: number;
  lowCad: number;
  highCad: number;
  measured: {
    runSeconds: number;
    peakMemoryMiB: number | null;
    outputBytes: number;
    worker: string;
    unit: string | null;
    bounded: number | null;
    full: number | null;
    /** Seconds per metric step, when progress metrics gave one. */
    secondsPerStep: number | null;
  };
  /** After the full run. */
  actualSec?: number;
  actualCostCad?: number;
  /** actual / estimate. */
  ratio?: number;
}

export interface SmokeMeasurement {
  usage: { runSeconds?: number | null; runStartedAt?: number | null; peakMemoryMiB?: number | null } | null;
  outputs: { size?: number }[];
  /** Progress points of the smoke run: (step, time) of its metric lines. */
  points: { name: string; step: number | null; ts: Date }[];
  worker: { name: string; cpuCores: number; memoryMiB: number; slots: number };
  task: { requirements: unknown; accelVendor: string | null };
}

/**
 * The estimate of a finished smoke run (or the preparation run that plays its part): its
 * attempt's usage and worker, its progress — metric points with steps, or else the times its
 * stdout lines name a unit ("epoch 3", "step 200": the last line naming each number) — and its
 * outputs. Null without an attempt or a reported run time.
 */
export async function measureSmokeRun(
  r: Pick<Resources, 'config' | 'prisma'>,
  task: { currentAttemptId: string | null; requirements: unknown; accelVendor: string | null; result: unknown },
  scale: SmokeRun['scale'] | undefined,
  source: Estimate['source'] = 'smoke run',
): Promise<Estimate | null> {
  if (!task.currentAttemptId) return null;
  const attempt = await r.prisma.attempt.findUnique({
    where: { id: task.currentAttemptId },
    select: { usage: true, worker: true, metricPoints: { where: { step: { not: null } }, select: { name: true, step: true, ts: true } } },
  });
  if (!attempt) return null;
  let points: SmokeMeasurement['points'] = attempt.metricPoints;
  if (new Set(points.map((p) => p.step)).size < 2 && scale) points = await progressFromLogs(r, task.currentAttemptId, scale.unit);
  const outputs = (task.result as { outputs?: { size?: number }[] } | null)?.outputs ?? [];
  return estimateFromSmokeRun(
    r,
    { usage: attempt.usage as SmokeMeasurement['usage'], outputs, points, worker: attempt.worker, task },
    scale,
    source,
  );
}

/** Lines that name a unit and its number: "| end of epoch   3 |", "step 200:", "iter 40". */
const UNIT_WORDS: Record<string, string> = { epoch: 'epoch', step: '(?:step|iter|iteration)', sample: 'sample' };
const MAX_PROGRESS_LINES = 20_000;

async function progressFromLogs(r: Pick<Resources, 'prisma'>, attemptId: string, unit: string): Promise<SmokeMeasurement['points']> {
  const word = UNIT_WORDS[unit];
  if (!word) return [];
  const lines = await r.prisma.logChunk.findMany({
    where: { attemptId, stream: 'stdout', ...(unit === 'step' ? {} : { text: { contains: unit, mode: 'insensitive' as const } }) },
    orderBy: { seq: 'asc' },
    take: MAX_PROGRESS_LINES,
    select: { text: true, ts: true },
  });
  const re = new RegExp(`\\b${word}\\s*[#:=]?\\s*(\\d+)\\b`, 'i');
  const last = new Map<number, Date>();
  for (const l of lines) {
    const m = re.exec(l.text);
    if (m) last.set(Number(m[1]), l.ts);
  }
  return [...last.entries()].map(([step, ts]) => ({ name: `log:${unit}`, step, ts }));
}

/** Null when the smoke run reported no run time (an old worker) — the plan is still tested. */
export function estimateFromSmokeRun(
  r: Pick<Resources, 'config'>,
  m: SmokeMeasurement,
  scale: SmokeRun['scale'] | undefined,
  source: Estimate['source'] = 'smoke run',
): Estimate | null {
  const runSeconds = m.usage?.runSeconds;
  if (typeof runSeconds !== 'number' || !(runSeconds > 0)) return null;
  const factor = scale ? scale.full / scale.bounded : null;
  const progress = progressRate(m.points);
  const runStart = typeof m.usage?.runStartedAt === 'number' ? m.usage.runStartedAt / 1000 : null;
  let point: number;
  let low: number;
  let high: number;
  let how: string;
  if (factor === null) {
    point = low = high = runSeconds;
    how = 'no run length to scale by, so this is the smoke run itself';
  } else if (progress && runStart !== null) {
    const startup = Math.max(0, progress.firstTs - runStart - progress.firstStep * progress.rate);
    const tail = Math.max(0, runStart + runSeconds - progress.lastTs);
    const work = progress.lastStep * factor * progress.rate;
    point = startup + work + tail;
    low = startup + work * 0.8 + tail;
    high = startup + work * 1.25 + tail;
    how = `${fmt(progress.rate)} per ${progress.fromLogs ? `${scale!.unit} from its log lines` : 'step from its progress metrics'}, start-up ${fmt(startup)}, ×${round(factor)}`;
  } else {
    point = high = runSeconds * factor;
    low = Math.min(runSeconds, point);
    how = `the whole smoke run ×${round(factor)} (no progress metrics: an upper bound, start-up included)`;
  }
  const price = (sec: number) => priceInterval(r.config.rates, reservationOf(m.task, m.worker), sec / 3600).costCad;
  const outputBytes = m.outputs.reduce((s, o) => s + (o.size ?? 0), 0);
  const peak = typeof m.usage?.peakMemoryMiB === 'number' ? m.usage.peakMemoryMiB : null;
  const did = scale
    ? `${round(scale.bounded)} of ${round(scale.full)} ${scale.unit}${scale.full === 1 ? '' : 's'}`
    : 'the bounded workload';
  return {
    source,
    basis: `${source === 'smoke run' ? 'Smoke run' : 'Preparation run'} on ${m.worker.name}: ${did} in ${fmt(runSeconds)}${peak !== null ? `, peak memory ${peak} MiB (sampled)` : ''}; ${how}.`,
    durationSec: round(point),
    lowSec: round(low),
    highSec: round(high),
    costCad: price(point),
    lowCad: price(low),
    highCad: price(high),
    measured: {
      runSeconds: round(runSeconds),
      peakMemoryMiB: peak,
      outputBytes,
      worker: m.worker.name,
      unit: scale?.unit ?? null,
      bounded: scale?.bounded ?? null,
      full: scale?.full ?? null,
      secondsPerStep: progress ? progress.rate : null,
    },
  };
}

/** What a run task's requirements get from its estimate: the cap check projects it to `estimateSec` (within its time limit). */
export function estimateRequirement(highSec: number | undefined, timeoutSec: number | undefined): { estimateSec?: number } {
  return highSec ? { estimateSec: Math.min(Math.ceil(highSec), timeoutSec ?? 7 * 86400) } : {};
}

/** The estimate with the full run's real duration and cost (and how far off it was). */
export function withActual(estimate: Estimate, actualSec: number, actualCostCad: number): Estimate {
  return {
    ...estimate,
    actualSec: round(actualSec),
    actualCostCad,
    ratio: estimate.durationSec > 0 ? round(actualSec / estimate.durationSec) : undefined,
  };
}

/** Slope of the metric with the most stepped points: seconds per step, first and last point. */
function progressRate(points: SmokeMeasurement['points']) {
  const byName = new Map<string, { step: number; t: number }[]>();
  for (const p of points) {
    if (p.step === null) continue;
    const list = byName.get(p.name) ?? [];
    list.push({ step: p.step, t: p.ts.getTime() / 1000 });
    byName.set(p.name, list);
  }
  const best = [...byName.values()].sort((a, b) => b.length - a.length)[0];
  if (!best || best.length < 2) return null;
  best.sort((a, b) => a.step - b.step || a.t - b.t);
  const first = best[0]!;
  const last = best.at(-1)!;
  if (last.step <= first.step || last.t <= first.t) return null;
  return {
    rate: (last.t - first.t) / (last.step - first.step),
    firstStep: first.step,
    firstTs: first.t,
    lastStep: last.step,
    lastTs: last.t,
    fromLogs: points.some((p) => p.name.startsWith('log:')),
  };
}

function round(n: number) {
  return Math.round(n * 100) / 100;
}
