/**
 * Streams a run's stdout/stderr to the API in order: every line gets the next seq
 * (one sequence across both streams and the worker's own `system` lines, in arrival order),
 * is batched (≤ 2000 lines and 4 MiB; the run's first lines after 250 ms, then at most one batch
 * of lines and one of metric points a second unless a full batch waits), and sent with its
 * (attemptId, fencingToken). One batch a second rather than four: a training loop printing a line
 * and a metric per step cost the API, PostgreSQL and the worker about a fifth of a core for its
 * requests on a 2-core machine (bench/overhead.ts, "platform CPU"), all of it taken from the run.
 * Lines that follow the metric convention (worker/src/metricLine.ts) also become metric points.
 *
 * The program is never slowed by the API. Its output is read from the pipes as fast as it
 * comes and appended to a spool file in the worker's data folder (outside the sandbox): one
 * frame per chunk — which stream, when it arrived, the bytes. A second loop reads the spool in
 * order, splits lines and sends them; when more than HIGH_WATER lines wait to be sent (the API
 * is slow or unreachable), that loop waits, not the program. Only when the spool holds more
 * than `spoolLimit` unsent bytes (or cannot be written: disk full) are the program's pipes
 * paused — then the run slows down rather than the worker losing lines or filling the disk.
 * A resent batch is harmless: the API stores each seq once.
 *
 * Before this, the pipes themselves were paused: a task printing 10 MB/s ran 2.4× as long
 * (bench/logStream.ts).
 */
import { closeSync, openSync, rmSync, writevSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { parseMetricLine } from './metricLine.js';

export const HIGH_WATER = 20_000;
export const LOW_WATER = 5_000;
/** Unsent bytes the spool may hold before the program's pipes are paused. */
export const SPOOL_LIMIT = 1024 * 1024 * 1024;
/** Bytes held in memory when the spool cannot be written before the pipes are paused. */
const MEMORY_LIMIT = 8 * 1024 * 1024;
/** Lines per batch: the API's limit (MAX_LOG_LINES); a fast program's backlog goes in few round trips. */
const MAX_BATCH = 2000;
/** Characters per batch, so a batch of long lines stays far below the API's 32 MiB request limit. */
const MAX_BATCH_CHARS = 4 * 1024 * 1024;
const MAX_POINTS = 2000;
const MAX_LINE = 16 * 1024;
/** How much of the spool one read takes. */
const READ_SIZE = 1024 * 1024;
/** The first batch of a run waits this long (its first lines show at once), */
export const FIRST_FLUSH_MS = 250;
/** and each later one this long after the previous batch went, unless a full batch waits. */
export const FLUSH_MS = 1000;

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

export interface LogStreamOptions {
  /** The spool file (created, and removed by close()). Keep it out of the task's sight. */
  spoolPath: string;
  spoolLimit?: number;
  /** the batch windows (default FIRST_FLUSH_MS, FLUSH_MS) */
  firstFlushMs?: number;
  flushMs?: number;
}

/** A spool frame: kind (0 stdout, 1 stderr, 2 system line, 3 end of stdout, 4 end of stderr), arrival (ms), length, bytes. */
const HEADER = 13;
const KINDS = ['stdout', 'stderr', 'system'] as const;

export class LogStream {
  private seq = 0;
  private metricSeq = 0;
  private lines: Line[] = [];
  private points: Point[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** When the last batch began (0: none yet). */
  private lastFlush = 0;
  /** The pending timer is for a full batch (due at once). */
  private fullBatchDue = false;
  private sending: Promise<void> | undefined;
  private readonly paused = new Set<Readable>();
  private readonly sources = new Set<Readable>();
  private stopped = false;
  // The spool: frames are written at `written` and read back from `read`.
  private fd: number | undefined;
  private written = 0;
  private read = 0;
  private spoolError: Error | undefined;
  /** Frames that could not be written to the spool (disk full): sent after the spool's. */
  private overflow: Buffer[] = [];
  private overflowBytes = 0;
  private ended = false;
  private wake: (() => void) | undefined;
  private pump: Promise<void> | undefined;
  private readonly decoders = [new StringDecoder('utf8'), new StringDecoder('utf8')];
  private readonly partial = ['', ''];
  /** The last value of each metric, for the attempt's summary. */
  readonly lastMetrics: Record<string, number> = {};
  totalLines = 0;
  error: Error | undefined;

  private readonly spoolLimit: number;

  constructor(
    private readonly sink: LogSink,
    private readonly opts: LogStreamOptions,
  ) {
    this.spoolLimit = opts.spoolLimit ?? SPOOL_LIMIT;
  }

  attach(stream: Readable, name: 'stdout' | 'stderr'): void {
    this.sources.add(stream);
    const kind = name === 'stdout' ? 0 : 1;
    stream.on('data', (chunk: Buffer) => this.input(kind, chunk));
    stream.on('end', () => {
      this.sources.delete(stream);
      this.input(kind + 3, Buffer.alloc(0));
    });
  }

  system(text: string): void {
    this.input(2, Buffer.from(text, 'utf8'));
  }

  /** Appends one frame to the spool (or, when it cannot be written, to memory) and wakes the reader. */
  private input(kind: number, bytes: Buffer): void {
    if (this.stopped) return;
    const header = Buffer.allocUnsafe(HEADER);
    header.writeUInt8(kind, 0);
    header.writeDoubleLE(Date.now(), 1);
    header.writeUInt32LE(bytes.length, 9);
    if (!this.spoolError && this.overflow.length === 0) {
      try {
        this.fd ??= openSync(this.opts.spoolPath, 'w+', 0o600);
        const n = writevSync(this.fd, [header, bytes], this.written);
        // A short write (disk full) leaves a torn frame past `written`: it is never read, and this frame goes to memory.
        if (n < HEADER + bytes.length) throw new Error(`the log spool took ${n} of ${HEADER + bytes.length} bytes`);
        this.written += n;
      } catch (err) {
        this.spoolError = err as Error;
      }
    }
    if (this.spoolError || this.overflow.length > 0) {
      this.overflow.push(header, bytes);
      this.overflowBytes += HEADER + bytes.length;
    }
    if (this.written - this.read > this.spoolLimit || this.overflowBytes > MEMORY_LIMIT) {
      for (const s of this.sources)
        if (!this.paused.has(s)) {
          s.pause();
          this.paused.add(s);
        }
    }
    this.pump ??= this.readSpool();
    this.wake?.();
  }

  /** Reads the spool back in order, frame by frame, into lines; waits while the send backlog is high. */
  private async readSpool(): Promise<void> {
    let fh: FileHandle | undefined;
    let carry = Buffer.alloc(0);
    const buf = Buffer.allocUnsafe(READ_SIZE);
    try {
      for (;;) {
        if (this.error) return;
        if (this.lines.length > HIGH_WATER) {
          await this.flush();
          continue;
        }
        let data: Buffer | undefined;
        if (this.read < this.written) {
          fh ??= await open(this.opts.spoolPath, 'r');
          const { bytesRead } = await fh.read(buf, 0, Math.min(READ_SIZE, this.written - this.read), this.read);
          this.read += bytesRead;
          data = carry.length ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
        } else if (this.overflow.length > 0) {
          data = Buffer.concat([carry, ...this.overflow]);
          this.overflow = [];
          this.overflowBytes = 0;
        } else if (this.ended) return;
        else {
          await new Promise<void>((resolve) => (this.wake = resolve));
          this.wake = undefined;
          continue;
        }
        let at = 0;
        while (data.length - at >= HEADER) {
          const len = data.readUInt32LE(at + 9);
          if (data.length - at - HEADER < len) break;
          this.frame(data.readUInt8(at), data.readDoubleLE(at + 1), data.subarray(at + HEADER, at + HEADER + len));
          at += HEADER + len;
        }
        carry = Buffer.from(data.subarray(at)); // a copy: `buf` is reused by the next read
        this.resumeSources();
      }
    } finally {
      await fh?.close();
    }
  }

  private resumeSources(): void {
    if (this.paused.size === 0) return;
    if (this.written - this.read > this.spoolLimit / 2 || this.overflowBytes > MEMORY_LIMIT / 2) return;
    for (const s of this.paused) {
      s.resume();
      this.paused.delete(s);
    }
  }

  private frame(kind: number, ms: number, bytes: Buffer): void {
    const ts = new Date(ms).toISOString();
    if (kind === 2) return this.push('system', bytes.toString('utf8'), ts);
    const i = kind % 3;
    const name = KINDS[i]!;
    if (kind >= 3) {
      const rest = this.partial[i] + this.decoders[i]!.end();
      this.partial[i] = '';
      if (rest) this.push(name, rest, ts);
      return;
    }
    const parts = (this.partial[i] + this.decoders[i]!.write(bytes)).split('\n');
    let partial = parts.pop() ?? '';
    // A line without a newline for too long is cut, not held forever.
    while (partial.length > MAX_LINE) {
      this.push(name, partial.slice(0, MAX_LINE), ts);
      partial = partial.slice(MAX_LINE);
    }
    this.partial[i] = partial;
    for (const p of parts) this.push(name, p.endsWith('\r') ? p.slice(0, -1) : p, ts);
  }

  private push(stream: Line['stream'], raw: string, ts: string): void {
    const text = raw.length > MAX_LINE ? `${raw.slice(0, MAX_LINE)}… [line cut at ${MAX_LINE} characters]` : raw;
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
    if (this.stopped) return;
    // A full batch waiting goes at once, not at the end of its window.
    if (this.timer && this.lines.length >= MAX_BATCH && !this.fullBatchDue) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.timer) return;
    this.fullBatchDue = this.lines.length >= MAX_BATCH;
    // The window runs from the previous batch's start: a steady printer sends once a window.
    const window =
      this.lastFlush === 0
        ? (this.opts.firstFlushMs ?? FIRST_FLUSH_MS)
        : Math.max(0, this.lastFlush + (this.opts.flushMs ?? FLUSH_MS) - Date.now());
    const due = this.lines.length >= MAX_BATCH ? 0 : window;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush(false);
    }, due);
  }

  /**
   * Sends every line read from the spool so far (one batch at a time, in order). A timed flush
   * (`all` false) sends what had arrived when it began; what arrives while it sends waits for the
   * next window instead of going in a request of its own at once.
   */
  async flush(all = true): Promise<void> {
    while (this.sending) await this.sending;
    if (this.lines.length === 0 && this.points.length === 0) return;
    this.lastFlush = Date.now();
    // A timed flush with a full batch waiting sends whole batches only: the rest fills the next one
    // (a fast printer's lines go 2000 a request, not a full batch and a few stragglers each time).
    const whole = this.lines.length >= MAX_BATCH ? this.lines.length - (this.lines.length % MAX_BATCH) : this.lines.length;
    let lineBudget = all ? Infinity : whole;
    let pointBudget = all ? Infinity : this.points.length;
    this.sending = (async () => {
      while ((this.lines.length > 0 && lineBudget > 0) || (this.points.length > 0 && pointBudget > 0)) {
        const lines = lineBudget > 0 ? this.lines.slice(0, Math.min(batchLength(this.lines), lineBudget)) : [];
        const points = pointBudget > 0 ? this.points.slice(0, Math.min(MAX_POINTS, pointBudget)) : [];
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
        lineBudget -= lines.length;
        pointBudget -= points.length;
      }
    })();
    try {
      await this.sending;
    } finally {
      this.sending = undefined;
      if (this.lines.length > 0 || this.points.length > 0) this.schedule();
    }
  }

  /**
   * Sends everything, the spool's backlog included (the program has ended: this is where a
   * run that printed faster than the API took its lines waits), then removes the spool.
   */
  async close(): Promise<void> {
    this.ended = true;
    this.wake?.();
    try {
      await this.pump;
      clearTimeout(this.timer);
      this.timer = undefined;
      await this.flush();
    } finally {
      this.stopped = true;
      if (this.fd !== undefined) closeSync(this.fd);
      this.fd = undefined;
      rmSync(this.opts.spoolPath, { force: true });
    }
  }
}

/** How many of the waiting lines the next batch takes: at most MAX_BATCH and MAX_BATCH_CHARS (at least one). */
function batchLength(lines: Line[]): number {
  let n = 0;
  let chars = 0;
  while (n < lines.length && n < MAX_BATCH && (n === 0 || chars + lines[n]!.text.length <= MAX_BATCH_CHARS))
    chars += lines[n++]!.text.length;
  return n;
}
