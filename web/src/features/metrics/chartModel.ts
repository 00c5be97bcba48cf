/**
 * What the job's Metrics panel draws, from the metric series of every attempt that reports
 * them (the smoke run, the run and its retries, each shard, the evaluation). Pure: the
 * panel and web/test/chartModel.test.ts use the same functions.
 *
 *   - One chart per metric *family*: `loss`, `train_loss`, `val/loss` are one family
 *     (`loss`), so training and validation curves share axes; each attempt's series is a
 *     line of its own (the smoke run dashed beside the run).
 *   - An `epoch` counter is not a curve: where it changes, the charts of that attempt get a
 *     labelled mark on the step axis.
 *   - Evaluation metrics (an EVALUATE attempt's, or a name starting eval_/test_) are a table
 *     of labelled values, not a one-point chart.
 */

export type SourceRole = 'smoke' | 'run' | 'shard' | 'eval';

export interface SeriesData {
  name: string;
  xs: readonly number[];
  ys: readonly number[];
  /** Reported without steps: xs are the metric lines' seqs. */
  stepless?: boolean;
}

export interface MetricSource {
  attemptId: string;
  /** What the legend says: "run", "run #2", "smoke run", "shard-003", "evaluate". */
  label: string;
  role: SourceRole;
  series: readonly SeriesData[];
}

export interface ChartLine {
  key: string;
  /** "run · val_loss" when the family has several names, else "run". */
  label: string;
  name: string;
  role: SourceRole;
  xs: readonly number[];
  ys: readonly number[];
}

export interface EpochMark {
  x: number;
  epoch: number;
}

export interface Chart {
  family: string;
  /** What x is: the step, or the epoch when the program reported its metrics by epoch without steps. */
  xLabel: 'step' | 'epoch';
  lines: ChartLine[];
  /** Epoch boundaries of the first source that reports an epoch counter (run before smoke). */
  epochs: EpochMark[];
}

export interface EvalRow {
  name: string;
  value: number;
  source: string;
  step: number | null;
}

const EPOCH = /^(epoch|epochs|epoch_num|cur_epoch)$/i;
const EVAL_NAME = /^(eval|test|final)[_/.-]/i;
const PREFIX = /^(train|training|val|valid|validation|eval|test)[_/.-]/i;

/** `val_loss` → `loss`; `train/accuracy` → `accuracy`; `lr` → `lr`. */
export function familyOf(name: string): string {
  const f = name.replace(PREFIX, '');
  return (f || name).toLowerCase();
}

export const isEpoch = (name: string) => EPOCH.test(name);

/** Where the epoch counter changes: one mark per new epoch value, at the step it was first reported. */
export function epochMarks(s: SeriesData): EpochMark[] {
  const marks: EpochMark[] = [];
  let last: number | null = null;
  for (let i = 0; i < s.xs.length; i++) {
    const e = s.ys[i]!;
    if (e !== last) marks.push({ x: s.xs[i]!, epoch: e });
    last = e;
  }
  return marks;
}

const ROLE_ORDER: Record<SourceRole, number> = { run: 0, shard: 1, smoke: 2, eval: 3 };
// Loss first, utilization last, the rest alphabetical.
const familyOrder = (n: string) => (/loss/i.test(n) ? 0 : /util|gpu|cpu|mem/i.test(n) ? 2 : 1);

export function buildCharts(sources: readonly MetricSource[]): { charts: Chart[]; evals: EvalRow[] } {
  const families = new Map<string, Chart>();
  const namesOf = new Map<string, Set<string>>();
  const evals: EvalRow[] = [];
  const epochsBy = new Map<MetricSource, EpochMark[]>();
  const ordered = [...sources].sort((a, b) => ROLE_ORDER[a.role] - ROLE_ORDER[b.role]);
  for (const src of ordered) {
    // Metrics logged per epoch without a step: the epoch counter of the same line is their x.
    const epochSeries = src.series.find((s) => isEpoch(s.name));
    const byEpoch = epochSeries?.stepless ? new Map(epochSeries.xs.map((seq, i) => [seq, epochSeries.ys[i]!])) : null;
    for (const raw of src.series) {
      const s =
        byEpoch && raw.stepless && !isEpoch(raw.name) && raw.xs.every((seq) => byEpoch.has(seq))
          ? { ...raw, xs: raw.xs.map((seq) => byEpoch.get(seq)!), byEpoch: true }
          : { ...raw, byEpoch: false };
      if (s.xs.length === 0) continue;
      if (isEpoch(s.name)) {
        if (!byEpoch) epochsBy.set(src, epochMarks(s));
        continue;
      }
      if (src.role === 'eval' || EVAL_NAME.test(s.name)) {
        const i = s.ys.length - 1;
        evals.push({ name: s.name, value: s.ys[i]!, source: src.label, step: src.role === 'eval' ? null : s.xs[i]! });
        continue;
      }
      const family = familyOf(s.name);
      let chart = families.get(family);
      if (!chart) {
        chart = { family, xLabel: s.byEpoch ? 'epoch' : 'step', lines: [], epochs: [] };
        families.set(family, chart);
        namesOf.set(family, new Set());
      }
      namesOf.get(family)!.add(s.name);
      chart.lines.push({ key: `${src.attemptId}:${s.name}`, label: src.label, name: s.name, role: src.role, xs: s.xs, ys: s.ys });
    }
  }
  const charts = [...families.values()].sort((a, b) => familyOrder(a.family) - familyOrder(b.family) || a.family.localeCompare(b.family));
  for (const c of charts) {
    if (namesOf.get(c.family)!.size > 1) for (const l of c.lines) l.label = `${l.label} · ${l.name}`;
    // The epoch marks of the source whose lines are on this chart, the run's before the smoke run's.
    for (const src of ordered) {
      const marks = epochsBy.get(src);
      if (marks && c.lines.some((l) => l.key.startsWith(`${src.attemptId}:`))) {
        c.epochs = marks;
        break;
      }
    }
  }
  return { charts, evals };
}

/** About `count` round tick values covering [lo, hi]. */
export function niceTicks(lo: number, hi: number, count = 4): number[] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [];
  if (hi === lo) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/**
 * The vertices to draw of one series: every point up to `max`, beyond that the first, the
 * minimum, the maximum and the last point of each of `max / 4` buckets along x (a spike
 * stays visible; 100,000 points cost a path of `max`).
 */
export function decimate(xs: readonly number[], ys: readonly number[], max = 2000): [number[], number[]] {
  const n = xs.length;
  if (n <= max) return [xs.slice(), ys.slice()];
  const buckets = Math.floor(max / 4);
  const ox: number[] = [];
  const oy: number[] = [];
  for (let b = 0; b < buckets; b++) {
    const from = Math.floor((b * n) / buckets);
    const to = Math.floor(((b + 1) * n) / buckets);
    if (to <= from) continue;
    let lo = from;
    let hi = from;
    for (let i = from; i < to; i++) {
      if (ys[i]! < ys[lo]!) lo = i;
      if (ys[i]! > ys[hi]!) hi = i;
    }
    for (const i of [...new Set([from, lo, hi, to - 1])].sort((a, b) => a - b)) {
      ox.push(xs[i]!);
      oy.push(ys[i]!);
    }
  }
  return [ox, oy];
}

/** A short number for axes and legends: 0.1235, 1.2k, 3.4e-5. */
export function formatValue(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(1);
  if (a >= 1e4) return `${Number((v / 1000).toPrecision(3))}k`;
  return String(Number(v.toPrecision(4)));
}

/**
 * The attempts whose metrics the panel shows, in the order their lines are drawn: the run
 * (and pipeline steps), its shards, the smoke run, the evaluation. Preparation runs and
 * replicas are left out (the Preparation section has their comparison). An attempt that
 * never started has nothing to show. Labels name the retry when a task has several.
 */
export function metricSourcesOf(
  tasks: readonly {
    kind: string;
    role: string;
    name: string;
    attempts: readonly { id: string; number: number; startedAt?: string | null }[];
  }[],
): { attemptId: string; label: string; role: SourceRole }[] {
  const out: { attemptId: string; label: string; role: SourceRole }[] = [];
  for (const t of tasks) {
    const role: SourceRole | null =
      t.kind === 'RUN' ? 'run' : t.kind === 'SHARD' ? 'shard' : t.kind === 'EVALUATE' ? 'eval' : t.role === 'SMOKE' ? 'smoke' : null;
    if (!role) continue;
    const started = t.attempts.filter((a) => a.startedAt);
    const base = role === 'smoke' ? 'smoke run' : t.name.replace(/^step:/, '');
    for (const a of started) out.push({ attemptId: a.id, role, label: started.length > 1 ? `${base} #${a.number}` : base });
  }
  return out.sort((a, b) => ROLE_ORDER[a.role] - ROLE_ORDER[b.role]);
}
