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

type Listener = (e: DomainEvent) => void;

export class PubSub implements EventBus {
  private readonly listeners = new Set<Listener>();
  private unlisten: (() => Promise<void>) | undefined;

  constructor(private readonly db: Pick<Database, 'listen' | 'notify'>) {}

  async start(): Promise<void> {
    this.unlisten = await this.db.listen(EVENTS_CHANNEL, (payload) => {
      let event: DomainEvent;
      try {
        event = JSON.parse(payload) as DomainEvent;
      } catch {
        return;
      }
      for (const l of [...this.listeners]) l(event);
    });
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
    this.listeners.clear();
  }

  async emit(event: DomainEvent): Promise<void> {
    await this.db.notify(EVENTS_CHANNEL, JSON.stringify(event));
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
