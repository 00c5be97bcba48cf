import type { TaskKind } from '../generated/prisma/enums.js';

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
  /**
   * Work became claimable: long-polling workers should look again. `count`: how many tasks
   * became claimable (a parked claim is woken per task, leases/dispatcher.ts); without it,
   * every parked claim looks.
   */
  | { type: 'tasks.available'; count?: number }
  /** Orders for a worker (cancel an attempt, pause) that should not wait for its next heartbeat. */
  | { type: 'worker.orders'; workerId: string }
  // ── What the job engine reports to the agents (agents/agentTurns.ts reacts; nothing else needs to) ──
  /** A job was created (DRAFT): planning should start. */
  | { type: 'job.created'; jobId: string }
  /** The user answered a question; `resumed` when no question is left open and the job is PLANNING again. */
  | {
      type: 'question.answered';
      jobId: string;
      questionId: string;
      resumed: boolean;
      /** The agent that asked, which continues with the answer. */ agent?: 'planner' | 'supervisor';
    }
  /** A task reached SUCCEEDED or FAILED (not a retry): the job engine decides what comes next. */
  | { type: 'task.finished'; jobId: string; taskId: string; kind: TaskKind; status: 'SUCCEEDED' | 'FAILED' }
  /** An attempt failed on an infrastructure error, or its lease was lost (errorClass LEASE_EXPIRED), and its task was queued again (the run supervisor looks). */
  | { type: 'attempt.failed'; jobId: string; taskId: string; attemptId: string; kind: TaskKind; errorClass: string }
  /** A running attempt said nothing (no log line, no metric) for STALL_MIN minutes while its lease was renewed (the run supervisor looks). */
  | { type: 'attempt.stalled'; jobId: string; taskId: string; attemptId: string }
  /** The tick stopped a job at its spending cap (STOPPED): the run supervisor says what the money went to and what finishing would take. */
  | { type: 'job.capped'; jobId: string }
  /** A finished run's (or evaluation's) result missed the fixed acceptance criteria and the job FAILED: the run supervisor names the evidence. */
  | { type: 'output.rejected'; jobId: string; taskId: string }
  /** A worker lost FLAP_LOST attempts (LOST or STALE) within FLAP_WINDOW_MIN: the supervisors of the jobs whose work it dropped keep their retries off it. */
  | { type: 'worker.flapping'; workerId: string; jobIds: string[]; lost: number; windowMin: number }
  /** The run supervisor handed a RUNNING job back to the planner (PLANNING) with its evidence: plan again. */
  | { type: 'job.replanned'; jobId: string }
  /** The preparation stage has something to do for this job (a plan to prepare, a revision proposed or requested). */
  | { type: 'preparation.step'; jobId: string }
  /** The scheduler tick ran: pick up work a crashed process left behind. */
  | { type: 'reconcile'; at: string };

export interface EventSink {
  emit(event: DomainEvent): Promise<void>;
  /** Several events in as few messages as fit (one NOTIFY for a batch); emitAll falls back to emit. */
  emitMany?(events: DomainEvent[]): Promise<void>;
}

/** Emits these events in order: in one go where the sink can (PubSub: one NOTIFY per ~7 KB), else one by one. */
export async function emitAll(sink: EventSink, events: DomainEvent[]): Promise<void> {
  if (events.length === 0) return;
  if (sink.emitMany && events.length > 1) return sink.emitMany(events);
  for (const e of events) await sink.emit(e);
}

/** An EventSink whose events can also be listened to (in every API process: see graphql/pubsub.ts). */
export interface EventBus extends EventSink {
  /** Calls `fn` for each matching event until the returned function is called. */
  on(filter: (e: DomainEvent) => boolean, fn: (e: DomainEvent) => void): () => void;
}

/** An EventSink that drops everything (scripts, unit tests of pure parts). */
export const nullEvents: EventSink = { emit: async () => {} };
