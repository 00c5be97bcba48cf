/**
 * Metric points of one attempt, grouped into series by name, x = step (or seq when the
 * program reported no step). Like LogStore it lives outside React state and notifies at
 * most once per frame. Points are ordered by (seq, name); a point is new when its seq is
 * above the last one seen for its name, so replays and overlapping pages are harmless.
 */
export interface MetricPointIn {
  seq: number;
  name: string;
  step?: number | null;
  value: number;
}

export type FetchMetricPage = (afterSeq: number) => Promise<MetricPointIn[]>;

export interface Series {
  name: string;
  xs: number[];
  ys: number[];
  lastSeq: number;
  /** True when the program reported points without a step: xs are then seqs (one per metric line). */
  stepless: boolean;
}

export class MetricStore {
  readonly series = new Map<string, Series>();
  loading = false;
  error: string | null = null;
  private maxSeq = -1;
  private version = 0;
  private scheduled = false;
  private running: Promise<void> | null = null;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly fetchPage: FetchMetricPage,
    private readonly pageSize: number,
  ) {}

  subscribe = (l: () => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  getVersion = () => this.version;

  push(points: readonly MetricPointIn[]): void {
    let added = false;
    for (const p of points) {
      let s = this.series.get(p.name);
      if (!s) {
        s = { name: p.name, xs: [], ys: [], lastSeq: -1, stepless: false };
        this.series.set(p.name, s);
      }
      if (p.seq <= s.lastSeq) continue;
      s.lastSeq = p.seq;
      if (p.step == null) s.stepless = true;
      s.xs.push(p.step ?? p.seq);
      s.ys.push(p.value);
      if (p.seq > this.maxSeq) this.maxSeq = p.seq;
      added = true;
    }
    if (added) this.changed();
  }

  /** Loads what is stored after the newest point we have (history at first, a gap after a reconnect). */
  catchUp(): Promise<void> {
    if (this.running) return this.running;
    this.loading = true;
    this.error = null;
    this.changed();
    this.running = (async () => {
      try {
        // Restart one seq back: a page may end in the middle of one seq's names.
        let after = this.maxSeq - 1;
        for (;;) {
          const page = await this.fetchPage(after);
          this.push(page);
          if (page.length < this.pageSize) break;
          const last = page[page.length - 1]!.seq;
          after = last - 1 > after ? last - 1 : last;
        }
      } catch (err) {
        this.error = (err as Error).message;
      } finally {
        this.running = null;
        this.loading = false;
        this.changed();
      }
    })();
    return this.running;
  }

  private changed(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const fire = () => {
      this.scheduled = false;
      this.version++;
      for (const l of [...this.listeners]) l();
    };
    if (typeof requestAnimationFrame === 'function' && document.visibilityState === 'visible') requestAnimationFrame(fire);
    else setTimeout(fire, 50);
  }
}
