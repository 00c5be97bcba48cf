/**
 * The metric convention (issue 3, item 7). A task reports a metric by printing ONE line to stdout:
 *
 *   CHATGPU_METRIC {"step": 10, "values": {"loss": 0.5, "accuracy": 0.9}, "ts": 1733140000.123}
 *
 * - the prefix `CHATGPU_METRIC ` (with one space) starts the line; the rest is a JSON object;
 * - `values` maps metric names to numbers; `step` (an integer, optional) orders points of one run;
 *   `ts` is Unix time in seconds (optional, may be fractional);
 * - Python tasks need not print it by hand: the worker puts a helper on PYTHONPATH,
 *   `from chatgpu.metrics import log; log(step=10, loss=0.5, accuracy=0.9)` (worker/python/chatgpu).
 *
 * - under a distributed launcher (torchrun's `--tee`, which `python -m chatgpu.torchrun` runs, see
 *   docs/launchers.md) each rank's line comes with the launcher's prefix, `[default0]:CHATGPU_METRIC {…}`
 *   (`[<role><local rank>]:`): the run's metrics are rank 0's; another rank's metric line is log output
 *   (the Python helper prints none there: it reports only where RANK is unset or 0).
 *
 * Lines that are not metrics are ordinary log output. A metric line that cannot be read is treated as
 * log output too (parseMetricLine returns null) — a task's bad print never breaks its run.
 */
export interface MetricLine {
  step: number | null;
  values: Record<string, number>;
  ts: number | null;
}

export const METRIC_PREFIX = 'CHATGPU_METRIC ';

/** torchrun's `--tee` line prefix: `[<role><local rank>]:` (torch.distributed.elastic's TailLog; role `default` unless --role). */
const RANK_PREFIX = /^\[([A-Za-z_][\w.-]*?)(\d+)\]:/;

/** The launcher's rank of a line (its `[default1]:` prefix) and the line without it; rank null when it has none. */
export function rankOfLine(line: string): { rank: number | null; text: string } {
  const m = RANK_PREFIX.exec(line);
  return m ? { rank: Number(m[2]), text: line.slice(m[0].length) } : { rank: null, text: line };
}

/** Longest metric line accepted; a longer one is log output (protects the metric store). */
const MAX_LINE = 64 * 1024;
const MAX_NAME = 200;
/** Python's json.dumps writes NaN, Infinity, -Infinity as bare tokens; they are values, never keys. */
const NON_FINITE = /(?<=[:[,]\s*)-?(?:NaN|Infinity)(?=\s*[,}\]])/g;

/**
 * Reads one stdout line. Tolerant: a trailing CR and leading spaces are ignored; non-finite values
 * (including Python's bare NaN/Infinity tokens, which json.dumps writes by default) and non-numeric
 * ones are dropped; numeric strings ("0.5") are read; true/false count as 1/0; a non-integer or
 * negative step becomes null. Returns null when the line is not a metric line, is not JSON, or holds
 * no usable value.
 */
export function parseMetricLine(line: string): MetricLine | null {
  if (line.length > MAX_LINE) return null;
  const ranked = rankOfLine(line);
  if (ranked.rank !== null && ranked.rank !== 0) return null; // metrics are rank 0's
  const text = ranked.text.replace(/\r?\n?$/, '').trimStart();
  if (!text.startsWith(METRIC_PREFIX.trimEnd())) return null;
  const body = text.slice(METRIC_PREFIX.trimEnd().length);
  if (body.length > 0 && !/^\s/.test(body)) return null; // "CHATGPU_METRICS" is not ours
  let data: unknown;
  try {
    data = JSON.parse(body.replace(NON_FINITE, 'null'));
  } catch {
    return null;
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) return null;
  const obj = data as Record<string, unknown>;
  const rawValues = obj.values;
  if (!rawValues || typeof rawValues !== 'object' || Array.isArray(rawValues)) return null;

  const values: Record<string, number> = {};
  for (const [name, raw] of Object.entries(rawValues as Record<string, unknown>)) {
    if (name.length === 0 || name.length > MAX_NAME) continue;
    const n = toNumber(raw);
    if (n !== null) values[name] = n;
  }
  if (Object.keys(values).length === 0) return null;

  const stepNum = toNumber(obj.step);
  const step = stepNum !== null && Number.isSafeInteger(stepNum) && stepNum >= 0 ? stepNum : null;
  const tsNum = toNumber(obj.ts);
  const ts = tsNum !== null && tsNum > 0 ? tsNum : null;
  return { step, values, ts };
}

function toNumber(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && v.trim() !== '' && /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v.trim())) {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}
