/**
 * The task and attempt life cycle: the transitions Task.status and Attempt.status may take, and
 * the one place in the domain that writes them. Every status write goes through `moveTasks` /
 * `moveAttempts` here, or through the `db/sql` statements listed in STATUS_STATEMENTS (the claim,
 * renewals, expiry and completions: set-based statements whose WHERE clauses encode the same
 * transitions). A test greps the tree for any other writer (api/test/taskLifecycle.test.ts).
 *
 *   Task        QUEUED ──claim──▶ LEASED ──start──▶ RUNNING ──▶ SUCCEEDED | FAILED
 *                 ▲                  │                 │
 *                 └── retry ◀────────┴─────────────────┘   (retryOrFail.ts: a lost lease or an
 *                                                           infrastructure failure; a drain; the
 *                                                           supervisor's retry of a FAILED task)
 *               any unfinished ──▶ CANCELLED (the job cancelled, failed or replanned)
 *               SUCCEEDED | FAILED ──▶ CANCELLED (superseded: a replan, or a smoke run replaced)
 *               QUEUED ──▶ FAILED (a replica no worker can take: given up; a data-download step
 *                                    only workers refusing the network could take: downloadWait.ts)
 *
 *   Attempt     LEASED ──▶ RUNNING ──▶ SUCCEEDED | FAILED | DRAINED
 *               LEASED | RUNNING ──▶ LOST (lease expired) | CANCELLED
 *               LOST ──▶ STALE (its worker reported after all)
 *
 * Every write is conditional on the statuses it moves from (`from`): a concurrent claim,
 * completion or expiry that moved the row first wins, and the caller sees a count of 0.
 */
import type { AttemptStatus, Prisma as P, TaskStatus } from '../../generated/prisma/client.js';
import type { Db } from '../../db/client.js';

export const TASK_TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  // QUEUED → QUEUED: queued again with new placement (the run supervisor's retry or reassignment of a waiting task).
  QUEUED: ['LEASED', 'QUEUED', 'CANCELLED', 'FAILED'],
  LEASED: ['RUNNING', 'QUEUED', 'SUCCEEDED', 'FAILED', 'CANCELLED'],
  RUNNING: ['QUEUED', 'SUCCEEDED', 'FAILED', 'CANCELLED'],
  SUCCEEDED: ['CANCELLED'],
  FAILED: ['QUEUED', 'CANCELLED'],
  CANCELLED: [],
};

export const ATTEMPT_TRANSITIONS: Readonly<Record<AttemptStatus, readonly AttemptStatus[]>> = {
  LEASED: ['RUNNING', 'SUCCEEDED', 'FAILED', 'LOST', 'CANCELLED', 'DRAINED'],
  RUNNING: ['SUCCEEDED', 'FAILED', 'LOST', 'CANCELLED', 'DRAINED'],
  SUCCEEDED: [],
  FAILED: [],
  LOST: ['STALE'],
  CANCELLED: [],
  STALE: [],
  DRAINED: [],
};

/** The db/sql statements that write Task.status or Attempt.status themselves (each documents its transitions; the insert only creates QUEUED rows). */
export const STATUS_STATEMENTS = [
  'db/sql/claimTasks.ts',
  'db/sql/renewLeases.ts',
  'db/sql/expireLeases.ts',
  'db/sql/completeAttempts.ts',
  'db/sql/insertTask.ts',
] as const;

export class InvalidTaskTransitionError extends Error {}

function check<S extends string>(table: Readonly<Record<S, readonly S[]>>, what: string, from: readonly S[], to: S): void {
  const bad = from.filter((f) => !table[f].includes(to));
  if (bad.length) throw new InvalidTaskTransitionError(`${what} cannot go from ${bad.join(', ')} to ${to}.`);
}

/** Whether a task may go from one status to another. */
export function taskMayMove(from: TaskStatus, to: TaskStatus): boolean {
  return TASK_TRANSITIONS[from].includes(to);
}

/**
 * Moves the tasks matching `where` that are in one of `from` to `to` (with the other fields in
 * `data`), in the caller's transaction; returns how many moved. A transition the table does not
 * allow is a programming error, thrown before anything is written.
 */
export async function moveTasks(
  tx: Db,
  where: P.TaskWhereInput,
  from: readonly TaskStatus[],
  to: TaskStatus,
  data: Omit<P.TaskUncheckedUpdateManyInput, 'status'> = {},
): Promise<number> {
  check(TASK_TRANSITIONS, 'A task', from, to);
  const res = await tx.task.updateMany({ where: { ...where, status: { in: [...from] } }, data: { ...data, status: to } });
  return res.count;
}

/** Moves attempts likewise (see moveTasks). */
export async function moveAttempts(
  tx: Db,
  where: P.AttemptWhereInput,
  from: readonly AttemptStatus[],
  to: AttemptStatus,
  data: Omit<P.AttemptUncheckedUpdateManyInput, 'status'> = {},
): Promise<number> {
  check(ATTEMPT_TRANSITIONS, 'An attempt', from, to);
  const res = await tx.attempt.updateMany({ where: { ...where, status: { in: [...from] } }, data: { ...data, status: to } });
  return res.count;
}
