/** Small text helpers for the `chatgpu` command's output. */

export const TERMINAL_STATUSES = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED']);

/** One line, at most `max` characters (an ellipsis marks the cut). */
export function oneLine(text: unknown, max = 160): string {
  const s = (typeof text === 'string' ? text : (JSON.stringify(text) ?? '')).replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

export function compactJson(v: unknown, max = 200): string {
  return oneLine(JSON.stringify(v), max);
}

/** "12s", "5m", "3h", "2d" since `iso`. */
export function age(iso: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - new Date(iso).getTime()) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** "4.2 s", "42 s", "12 min", "3.5 h" (how the server words durations too: domain/jobs/estimateText.ts). */
export function duration(sec: number): string {
  if (sec < 90) return `${sec < 10 ? sec.toFixed(1) : Math.round(sec)} s`;
  if (sec < 5400) return `${Math.round(sec / 60)} min`;
  return `${(sec / 3600).toFixed(1)} h`;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

export function cad(v: unknown): string {
  const n = typeof v === 'number' ? v : Number(v ?? 0);
  return Number.isFinite(n) ? n.toFixed(n !== 0 && Math.abs(n) < 0.01 ? 4 : 2) : String(v);
}

/** A left-aligned text table with a header row. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

/** Tool-call arguments as `key=value, …`, each value short. */
export function shortArgs(args: unknown, max = 140): string {
  let v = args;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      return oneLine(v, max);
    }
  }
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const parts = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== null && x !== undefined)
      .map(([k, x]) => `${k}=${oneLine(typeof x === 'string' ? JSON.stringify(x) : JSON.stringify(x), 48)}`);
    return oneLine(parts.join(', '), max);
  }
  return compactJson(v, max);
}

/** A tool result in a few words: an error's message, else the start of the text. */
export function shortResult(output: unknown, max = 160): string {
  let v = output;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      return oneLine(v, max);
    }
  }
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    if (typeof o.error === 'string') return `error: ${oneLine(o.error, max - 7)}`;
    if (o.error && typeof o.error === 'object' && typeof (o.error as { message?: unknown }).message === 'string') {
      return `error: ${oneLine((o.error as { message: string }).message, max - 7)}`;
    }
    for (const k of ['summary', 'message', 'answer', 'text']) if (typeof o[k] === 'string') return oneLine(o[k], max);
  }
  return compactJson(v, max);
}

export function metricValue(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e6) ? v.toExponential(3) : String(Number(v.toPrecision(5)));
}
