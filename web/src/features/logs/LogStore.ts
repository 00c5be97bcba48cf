/**
 * The log lines of one attempt, in seq order, outside React state: 100,000 lines as
 * React state would re-render and diff on every batch. Components subscribe to a version
 * number that changes at most once per animation frame.
 *
 * Ordering: lines arrive from two sources — history pages (Attempt.logs, afterSeq) and
 * live batches (LogLinesEvent). A store starts by catching up from the beginning; live
 * batches that arrive meanwhile wait in `pending`. A live batch that leaves a gap after
 * the last known seq (missed while disconnected, or the server dropped events) triggers
 * another catch-up from the last known seq. Lines at or below the last seq are duplicates
 * (replays after a reconnect) and are ignored.
 */
export interface LogLine {
  seq: number;
  stream: string;
  text: string;
  ts: string;
}

export type FetchLogPage = (afterSeq: number) => Promise<LogLine[]>;

export class LogStore {
  readonly seqs: number[] = [];
  readonly texts: string[] = [];
  readonly streams: string[] = [];
  readonly times: string[] = [];
  lastSeq = -1;
  /** True while history pages are being fetched. */
  loading = false;
  error: string | null = null;
  private pending: LogLine[] = [];
  private version = 0;
  private scheduled = false;
  private readonly listeners = new Set<() => void>();
  private catchUpRun: Promise<void> | null = null;
  private disposed = false;

  constructor(
    private readonly fetchPage: FetchLogPage,
    private readonly pageSize: number,
  ) {}

  get length(): number {
    return this.seqs.length;
  }

  subscribe = (l: () => void): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };

  getVersion = (): number => this.version;

  /** Live lines (already in seq order within the batch). */
  push(lines: readonly LogLine[]): void {
    if (lines.length === 0) return;
    if (this.catchUpRun) {
      this.pending.push(...lines);
      return;
    }
    const first = lines.find((l) => l.seq > this.lastSeq);
    if (!first) return;
    if (first.seq > this.lastSeq + 1) {
      // A gap (or, with nothing known yet, possibly earlier lines in history): fetch it first.
      this.pending.push(...lines);
      void this.catchUp();
      return;
    }
    this.append(lines);
  }

  /** Fetches everything after the last known seq (history, or a gap), then applies pending live lines. */
  catchUp(): Promise<void> {
    if (this.catchUpRun) return this.catchUpRun;
    this.loading = true;
    this.error = null;
    this.changed();
    this.catchUpRun = (async () => {
      try {
        for (;;) {
          const pendingMin = this.pending.reduce((m, l) => Math.min(m, l.seq), Infinity);
          if (this.lastSeq + 1 >= pendingMin) break;
          const page = await this.fetchPage(this.lastSeq);
          if (this.disposed) return;
          this.append(page);
          if (page.length < this.pageSize) break;
        }
      } catch (err) {
        this.error = (err as Error).message;
      } finally {
        const pending = this.pending.sort((a, b) => a.seq - b.seq);
        this.pending = [];
        this.catchUpRun = null;
        this.loading = false;
        this.append(pending);
        this.changed();
      }
    })();
    return this.catchUpRun;
  }

  private append(lines: readonly LogLine[]): void {
    let added = false;
    for (const l of lines) {
      if (l.seq <= this.lastSeq) continue;
      this.seqs.push(l.seq);
      this.texts.push(l.text);
      this.streams.push(l.stream);
      this.times.push(l.ts);
      this.lastSeq = l.seq;
      added = true;
    }
    if (added) this.changed();
  }

  private changed(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const fire = () => {
      this.scheduled = false;
      this.version++;
      for (const l of [...this.listeners]) l();
    };
    // One notification per frame however many batches arrive; a hidden tab still updates.
    if (typeof requestAnimationFrame === 'function' && document.visibilityState === 'visible') requestAnimationFrame(fire);
    else setTimeout(fire, 50);
  }

  dispose(): void {
    this.disposed = true;
    this.listeners.clear();
  }
}
