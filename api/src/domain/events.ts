/**
 * What the domain tells the outside world. Events carry ids only (they travel as
 * PostgreSQL NOTIFY payloads, limited to 8000 bytes); subscribers fetch what they show.
 * graphql/pubsub.ts maps them to subscription topics.
 */
export type DomainEvent =
  /** A JobEvent row was committed (status change, plan, agent item, task/attempt change…). */
  | { type: 'job.event'; jobId: string; eventId: string }
  /** The job row changed. */
  | { type: 'job.updated'; jobId: string }
  /** Log chunks [fromSeq, toSeq] of an attempt were stored. */
  | { type: 'job.logs'; jobId: string; attemptId: string; fromSeq: number; toSeq: number }
  /** Metric points [fromSeq, toSeq] of an attempt were stored. */
  | { type: 'job.metrics'; jobId: string; attemptId: string; fromSeq: number; toSeq: number }
  | { type: 'worker.changed'; workerId: string; ownerId: string }
  /** Work became claimable: long-polling workers should look again. */
  | { type: 'tasks.available' }
  /** Orders for a worker (cancel an attempt, pause) that should not wait for its next heartbeat. */
  | { type: 'worker.orders'; workerId: string };

export interface EventSink {
  emit(event: DomainEvent): Promise<void>;
}

/** An EventSink that drops everything (scripts, unit tests of pure parts). */
export const nullEvents: EventSink = { emit: async () => {} };
