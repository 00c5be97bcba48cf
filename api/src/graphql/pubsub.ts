/**
 * Domain events → subscribers, across API processes (invariant 4). Every event is
 * sent with NOTIFY on one channel; every process LISTENs once and fans out in memory
 * to its own subscribers. Events carry ids only, well under NOTIFY's 8000-byte limit;
 * subscribers fetch what they show (so a large payload is always "fetched by id").
 */
import type { Database } from '../db/client.js';
import type { DomainEvent, EventBus } from '../domain/events.js';

export const EVENTS_CHANNEL = 'chatgpu_events';
const MAX_QUEUE = 10_000;
/** A NOTIFY payload's limit is 8000 bytes; a batch is split below it. */
export const NOTIFY_BYTES = 7900;

/** JSON arrays of events, in order, each under NOTIFY_BYTES (events carry ids only, so one always fits). */
export function packEvents(events: DomainEvent[]): string[] {
  const out: string[] = [];
  let part: string[] = [];
  let bytes = 2;
  for (const e of events) {
    const s = JSON.stringify(e);
    const n = Buffer.byteLength(s) + 1;
    if (part.length > 0 && bytes + n > NOTIFY_BYTES) {
      out.push(`[${part.join(',')}]`);
      part = [];
      bytes = 2;
    }
    part.push(s);
    bytes += n;
  }
  if (part.length > 0) out.push(`[${part.join(',')}]`);
  return out;
}

type Listener = (e: DomainEvent) => void;

export class PubSub implements EventBus {
  private readonly listeners = new Set<Listener>();
  private unlisten: (() => Promise<void>) | undefined;

  constructor(private readonly db: Pick<Database, 'listen' | 'notify'>) {}

  async start(): Promise<void> {
    this.unlisten = await this.db.listen(EVENTS_CHANNEL, (payload) => {
      let parsed: DomainEvent | DomainEvent[];
      try {
        parsed = JSON.parse(payload) as DomainEvent | DomainEvent[];
      } catch {
        return;
      }
      // A batch (emitMany) arrives as one array: its events in order.
      for (const event of Array.isArray(parsed) ? parsed : [parsed]) for (const l of [...this.listeners]) l(event);
    });
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
    this.listeners.clear();
  }

  async emit(event: DomainEvent): Promise<void> {
    await this.db.notify(EVENTS_CHANNEL, JSON.stringify(event));
  }

  /** One NOTIFY per batch: the events as one JSON array, split only where a payload would pass NOTIFY_BYTES. */
  async emitMany(events: DomainEvent[]): Promise<void> {
    for (const payload of packEvents(events)) await this.db.notify(EVENTS_CHANNEL, payload);
  }

  /** Calls `fn` for each matching event until the returned function is called. */
  on(filter: (e: DomainEvent) => boolean, fn: Listener): () => void {
    const l: Listener = (e) => {
      if (filter(e)) fn(e);
    };
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Resolves true when a matching event arrives, false at timeout or abort. */
  waitFor(filter: (e: DomainEvent) => boolean, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve(false);
      const done = (v: boolean) => {
        clearTimeout(timer);
        off();
        signal?.removeEventListener('abort', onAbort);
        resolve(v);
      };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      const off = this.on(filter, () => done(true));
      signal?.addEventListener('abort', onAbort);
    });
  }

  /** An async iterator of matching events (for GraphQL subscriptions). */
  subscribe(filter: (e: DomainEvent) => boolean): AsyncIterableIterator<DomainEvent> {
    const queue: DomainEvent[] = [];
    let wake: (() => void) | undefined;
    let closed = false;
    let overflow = false;
    const off = this.on(filter, (e) => {
      if (queue.length >= MAX_QUEUE) overflow = true;
      else queue.push(e);
      wake?.();
    });
    const finish = () => {
      closed = true;
      off();
      wake?.();
    };
    const it: AsyncIterableIterator<DomainEvent> = {
      [Symbol.asyncIterator]: () => it,
      next: async () => {
        while (!closed && queue.length === 0 && !overflow) await new Promise<void>((r) => (wake = r));
        wake = undefined;
        if (overflow) {
          finish();
          throw new Error('Subscriber too slow: events were dropped. Resubscribe to continue.');
        }
        if (queue.length > 0) return { value: queue.shift()!, done: false };
        return { value: undefined, done: true };
      },
      return: async () => {
        finish();
        return { value: undefined, done: true };
      },
    };
    return it;
  }
}
