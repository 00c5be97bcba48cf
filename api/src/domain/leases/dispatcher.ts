/**
 * Dispatch: which parked long-poll claims (claim.ts) look again when work appears. A
 * `tasks.available` event that says how many tasks became claimable (`count`) wakes one
 * parked claim per task — not every parked worker — so with 50 idle workers a new task
 * costs one claim query, not 50 (bench/dispatchLatency.ts). Without a count (a resume, a
 * requeue by the tick), every parked claim looks, as before.
 *
 * A wake is a token handed to the longest-parked claim that has not yet tried it. No wake is
 * lost: a claim that looked after receiving a token (so its query saw the task's commit) and
 * took fewer tasks than the tokens it held passes the rest on, each to a claim that has not
 * tried it; a token that arrives while a claim's query is running is not counted as tried
 * (that query may have started before the commit), so the claim looks again at once. A token
 * every parked claim has tried (work none of them can take) is dropped; the task waits for
 * the next claim, as with a broadcast. Orders for a worker (`worker.orders`) end its claim.
 * Per API process: each process's LISTEN hands the same count to its own parked claims.
 */
import type { DomainEvent, EventBus } from '../events.js';

interface Token {
  tried: Set<Parked>;
}

export class Parked {
  tokens: Token[] = [];
  ordered = false;
  private kicked = false;
  private wakeUp: (() => void) | undefined;

  constructor(
    readonly workerId: string,
    private readonly dispatcher: Dispatcher,
  ) {}

  kick(): void {
    this.kicked = true;
    this.wakeUp?.();
  }

  /** Before a look: the tokens held now, whose tasks the coming query will see. */
  beginLook(): Token[] {
    this.kicked = false;
    return [...this.tokens];
  }

  /** After a look that claimed `claimed` tasks: tokens it used are spent, the tried ones passed on. */
  endLook(seen: Token[], claimed: number): void {
    this.tokens.splice(0, Math.min(claimed, this.tokens.length));
    const passOn = this.tokens.filter((t) => seen.includes(t));
    this.tokens = this.tokens.filter((t) => !seen.includes(t));
    for (const t of passOn) {
      t.tried.add(this);
      this.dispatcher.give(t);
    }
    if (this.tokens.length > 0) this.kicked = true;
  }

  /** Resolves true when kicked (a token, orders, a broadcast) since the last look began; false at timeout or abort. */
  wait(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.kicked) return Promise.resolve(true);
    if (signal?.aborted || timeoutMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (v: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.wakeUp = undefined;
        resolve(v);
      };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.wakeUp = () => done(true);
      signal?.addEventListener('abort', onAbort);
    });
  }
}

export class Dispatcher {
  /** Parked claims, longest-parked first. */
  private readonly parked: Parked[] = [];

  constructor(bus: Pick<EventBus, 'on'>) {
    bus.on(
      (e) => e.type === 'tasks.available' || e.type === 'worker.orders',
      (e) => this.onEvent(e),
    );
  }

  private onEvent(e: DomainEvent): void {
    if (e.type === 'worker.orders') {
      for (const p of this.parked)
        if (p.workerId === e.workerId) {
          p.ordered = true;
          p.kick();
        }
    } else if (e.type === 'tasks.available') {
      if (e.count === undefined) for (const p of [...this.parked]) p.kick();
      else for (let i = 0; i < e.count; i++) this.give({ tried: new Set() });
    }
  }

  /** Hands a token to the longest-parked claim that has not tried it (none: it is dropped). */
  give(t: Token): void {
    const p = this.parked.find((x) => !t.tried.has(x));
    if (!p) return;
    p.tokens.push(t);
    p.kick();
  }

  park(workerId: string): Parked {
    const p = new Parked(workerId, this);
    this.parked.push(p);
    return p;
  }

  /** The claim is over: it leaves the queue and its unused tokens go to the others (not counted as tried by it). */
  unpark(p: Parked): void {
    const i = this.parked.indexOf(p);
    if (i >= 0) this.parked.splice(i, 1);
    const left = p.tokens;
    p.tokens = [];
    for (const t of left) this.give(t);
  }

  /** Parked claims now (tests, metrics). */
  get size(): number {
    return this.parked.length;
  }
}

const dispatchers = new WeakMap<object, Dispatcher>();

/** The dispatcher of this event bus (one per API process), created on first use. */
export function dispatcherFor(bus: Pick<EventBus, 'on'>): Dispatcher {
  let d = dispatchers.get(bus);
  if (!d) dispatchers.set(bus, (d = new Dispatcher(bus)));
  return d;
}
