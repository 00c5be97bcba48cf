/**
 * The program's stdout as a file (CHATGPU_STDOUT_FILE, requestedOutputs.ts): the bytes it printed,
 * as they came, except whole lines that are metric lines (metricLine.ts — the worker's protocol,
 * stored as metrics, not what the user reads). Written by the worker into its own spool folder,
 * outside the sandbox, and uploaded from there: the task cannot point the file anywhere else, and a
 * file the program writes at the same path is replaced by this one.
 *
 * Bounded: past `limit` bytes (the per-file output limit) nothing more is written and `cut` says so.
 * A line is held back only while it may still become a metric line (it starts with the metric
 * prefix, at most 64 KiB — longer is not a metric line); everything else goes straight to the file.
 * A write error (disk full) stops the file, never the run.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { METRIC_PREFIX, parseMetricLine } from './metricLine.js';

const PREFIX = Buffer.from(METRIC_PREFIX.trimEnd());
/** Longer than this, a line is never a metric line (metricLine.ts's MAX_LINE) and is not held back. */
const MAX_METRIC_LINE = 64 * 1024;

export interface StdoutFileSummary {
  bytes: number;
  /** the limit was reached and the rest was not written */
  cut: boolean;
  /** why writing stopped early, when it did */
  error: string | null;
}

export class StdoutFile {
  private fd: number | null;
  private bytes = 0;
  private cut = false;
  private error: string | null = null;
  /** The start of the current line while it may still be a metric line. */
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** The current line is known not to be a metric line: its bytes go straight through. */
  private plain = false;

  constructor(
    readonly path: string,
    private readonly limit: number,
  ) {
    this.fd = openSync(path, 'w', 0o600);
  }

  write(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? chunk.length : nl + 1;
      const piece = chunk.subarray(start, end);
      if (this.plain) this.out(piece);
      else {
        this.held.push(piece);
        this.heldBytes += piece.length;
        const line = Buffer.concat(this.held);
        if (!mayBeMetric(line) || this.heldBytes > MAX_METRIC_LINE) this.release(false);
      }
      if (nl !== -1) this.endLine();
      start = end;
    }
  }

  /** Writes what is held back (unless it is a metric line); returns what was written. */
  close(): StdoutFileSummary {
    if (!this.plain && this.heldBytes) this.release(parseMetricLine(Buffer.concat(this.held).toString('utf8')) !== null);
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    return { bytes: this.bytes, cut: this.cut, error: this.error };
  }

  private endLine(): void {
    if (!this.plain && this.heldBytes) this.release(parseMetricLine(Buffer.concat(this.held).toString('utf8')) !== null);
    this.plain = false;
  }

  /** Ends holding back the current line: drops it when it is a metric line, else writes it and lets the rest through. */
  private release(metric: boolean): void {
    const line = Buffer.concat(this.held);
    this.held = [];
    this.heldBytes = 0;
    if (!metric) {
      this.out(line);
      this.plain = true;
    }
  }

  private out(bytes: Buffer): void {
    if (this.fd === null || this.cut || this.error || bytes.length === 0) return;
    const room = this.limit - this.bytes;
    const take = bytes.length > room ? bytes.subarray(0, room) : bytes;
    if (bytes.length > room) this.cut = true;
    try {
      let at = 0;
      while (at < take.length) at += writeSync(this.fd, take, at, take.length - at);
      this.bytes += take.length;
    } catch (err) {
      this.error = (err as Error).message;
    }
  }
}

/** Whether the line so far can still turn out to be a metric line: blanks, then (a start of) the prefix. */
function mayBeMetric(line: Buffer): boolean {
  let i = 0;
  while (i < line.length && (line[i] === 0x20 || line[i] === 0x09)) i++;
  const rest = line.subarray(i);
  const n = Math.min(rest.length, PREFIX.length);
  return rest.subarray(0, n).equals(PREFIX.subarray(0, n));
}
