/**
 * Streams a run's stdout/stderr to the API in order: every line gets the next seq
 * (one sequence across both streams, in arrival order), is batched (≤ 2000 lines and 4 MiB, or
 * 250 ms), and sent with its (attemptId, fencingToken). Lines that follow the metric
 * convention (worker/src/metricLine.ts) also become metric points.
 *
 * Backpressure: when more than HIGH_WATER lines wait to be sent (the API is slow or
 * unreachable), the child's pipes are paused until the backlog drains below LOW_WATER —
 * the run slows down rather than the worker losing lines or growing without bound.
 * A resent batch is harmless: the API stores each seq once.
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { parseMetricLine } from './metricLine.js';

export const HIGH_WATER = 20_000;
export const LOW_WATER = 5_000;
/** Lines per batch: the API's limit (MAX_LOG_LINES); a fast program's backlog goes in few round trips. */
const MAX_BATCH = 2000;
/** Characters per batch, so a batch of long lines stays far below the API's 32 MiB request limit. */
const MAX_BATCH_CHARS = 4 * 1024 * 1024;
const MAX_POINTS = 2000;
const MAX_LINE = 16 * 1024;

export interface Line {
  seq: number;
  stream: 'stdout' | 'stderr' | 'system';
  text: string;
  ts: string;
}
export interface Point {
  seq: number;
  name: string;
  step: number | null;
  value: number;
  ts: string;
}

export interface LogSink {
  sendLogs(lines: Line[]): Promise<void>;
  sendMetrics(points: Point[]): Promise<void>;
}

export class LogStream {
  private seq = 0;
  private metricSeq = 0;
  private lines: Line[] = [];
  private points: Point[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  private readonly paused = new Set<Readable>();
  private readonly sources = new Set<Readable>();
  private stopped = false;
  /** The last value of each metric, for the attempt's summary. */
  readonly lastMetrics: Record<string, number> = {};
  totalLines = 0;
  error: Error | undefined;

  constructor(private readonly sink: LogSink) {}

  attach(stream: Readable, name: 'stdout' | 'stderr'): void {
    this.sources.add(stream);
    const decoder = new StringDecoder('utf8');
    let partial = '';
    stream.on('data', (chunk: Buffer) => {
      const text = partial + decoder.write(chunk);
      const parts = text.split('\n');
      partial = parts.pop() ?? '';
      // A line without a newline for too long is cut, not held forever.
      while (partial.length > MAX_LINE) {
        this.push(name, partial.slice(0, MAX_LINE));
        partial = partial.slice(MAX_LINE);
      }
      for (const p of parts) this.push(name, p.endsWith('\r') ? p.slice(0, -1) : p);
      if (this.lines.length > HIGH_WATER) for (const s of this.sources) if (!this.paused.has(s)) (s.pause(), this.paused.add(s));
    });
    stream.on('end', () => {
      const rest = partial + decoder.end();
      if (rest) this.push(name, rest);
      partial = '';
    });
  }

  system(text: string): void {
    this.push('system', text);
  }

  private push(stream: Line['stream'], raw: string): void {
    const text = raw.length > MAX_LINE ? `${raw.slice(0, MAX_LINE)}… [line cut at ${MAX_LINE} characters]` : raw;
    const ts = new Date().toISOString();
    this.lines.push({ seq: this.seq++, stream, text, ts });
    this.totalLines++;
    if (stream === 'stdout') {
      const m = parseMetricLine(raw);
      if (m) {
        const seq = this.metricSeq++;
        for (const [name, value] of Object.entries(m.values)) {
          this.points.push({ seq, name, step: m.step, value, ts: m.ts !== null ? new Date(m.ts * 1000).toISOString() : ts });
          this.lastMetrics[name] = value;
        }
      }
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.stopped) return;
    const due = this.lines.length >= MAX_BATCH ? 0 : 250;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, due);
  }

  /** Sends everything buffered so far (one batch at a time, in order). */
  async flush(): Promise<void> {
    while (this.sending) await this.sending;
    if (this.lines.length === 0 && this.points.length === 0) return;
    this.sending = (async () => {
      while (this.lines.length > 0 || this.points.length > 0) {
        const lines = this.lines.slice(0, batchLength(this.lines));
        const points = this.points.slice(0, MAX_POINTS);
        try {
          if (lines.length) await this.sink.sendLogs(lines);
          if (points.length) await this.sink.sendMetrics(points);
        } catch (err) {
          this.error = err as Error;
          this.lines = [];
          this.points = [];
          break;
        }
        this.lines.splice(0, lines.length);
        this.points.splice(0, points.length);
        if (this.lines.length < LOW_WATER) for (const s of this.paused) (s.resume(), this.paused.delete(s));
      }
    })();
    try {
      await this.sending;
    } finally {
      this.sending = undefined;
    }
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
    this.stopped = true;
  }
}

/** How many of the waiting lines the next batch takes: at most MAX_BATCH and MAX_BATCH_CHARS (at least one). */
function batchLength(lines: Line[]): number {
  let n = 0;
  let chars = 0;
  while (n < lines.length && n < MAX_BATCH && (n === 0 || chars + lines[n]!.text.length <= MAX_BATCH_CHARS)) chars += lines[n++]!.text.length;
  return n;
}
