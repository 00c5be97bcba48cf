/**
 * Trust-weighted validation of untrusted workers (docs/architecture.md §11), on the job engine.
 * A checkable task (its plan marked the outputs deterministic within tolerances: requirements
 * .checkable) whose result is the job's — the main run, or a shard — goes through one check
 * (a ResultCheck row, unique per task) before the job moves on:
 *
 *   result arrives           → the worker's share (reputation.ts) and a fresh draw decide:
 *       not sampled          → SKIPPED: the result is accepted as it is
 *       sampled              → REPLICATING: a replica task (`replica:<task>`, PROBE) of the same
 *                              code, command and inputs, on a worker of ANOTHER owner (avoidOwners)
 *   replica done             → the two results compared (compare.py with the task's tolerances,
 *                              the preparation stage's comparison, compareTaskOutputs):
 *       agree                → MATCHED: both workers +1 confirmed; the original's result goes on
 *       differ               → TIEBREAK: a third run (`tiebreak:<task>`) on a worker of neither owner,
 *                              at least as trusted as reputation.ts tieBreakerReputation asks
 *   tie-breaker done         → compared with both:
 *       agrees with one      → RESOLVED: the other worker +1 mismatch (its attempt's usage becomes
 *                              the contributor's loss), the two that agree +1 confirmed; the job
 *                              goes on with the agreeing result (the replica's when the original
 *                              was wrong: ResultCheck.verifiedResult, which jobOutputs serves)
 *       agrees with neither  → UNRESOLVED: the job fails (the output is not reproducible)
 *   replica / tie-breaker failed for good, or the API could not compare
 *                            → UNCHECKED: the original is accepted unverified (after a mismatch:
 *                              the job fails instead — a known disagreement is never accepted)
 *
 * Every decision is a `trust.check` job event (the job's timeline says "replicated on X;
 * matched / mismatched; tie-breaker on Y"). Decisions run in the API on task completion and
 * never wait on a model. Exactly once across callers: each step is a conditional update of the
 * check's status under the job's row lock; a caller that finds it moved does nothing. The
 * replicas' usage is billable like any task of the job (it counts toward the cap, and the cap is
 * checked at their lease grant); it is shown apart as the job's replication cost.
 */
import type { Prisma as P, ResultCheck } from '../../generated/prisma/client.js';
import type { Db } from '../../db/client.js';
import { lockJob } from '../../db/sql/lockJob.js';
import { ComparisonError, type ComparisonReport } from '../../preparation/compareOutputs.js';
import { writeOffAttemptUsage } from '../billing/usage.js';
import type { ManifestEntry } from '../blobs/paths.js';
import { insertTask, taskRow, type Requirements } from '../jobs/createTask.js';
import { recordJobEvent } from '../jobs/jobEvents.js';
import { applyTransition, commitTransition } from '../jobs/jobLifecycle.js';
import { compareTaskOutputs, toleranceCriteria } from '../preparation/compareTaskOutputs.js';
import type { Resources } from '../resources.js';
import { canRunOn, onlineWorkers } from '../workers/placement.js';
import { decideReplication, randomDraw, reputationOf, tieBreak, tieBreakerReputation } from './reputation.js';
import { moveTasks } from '../leases/taskLifecycle.js';

export const REPLICA_PREFIX = 'replica:';
export const TIEBREAK_PREFIX = 'tiebreak:';

export interface CheckedResult {
  outputs?: ManifestEntry[];
  metrics?: Record<string, number> | null;
  exitCode?: number;
}

interface CheckedTask {
  id: string;
  jobId: string;
  kind: string;
  name: string;
  role: string;
  status: string;
  codeVersionId: string;
  command: string;
  environment: unknown;
  requirements: unknown;
  currentAttemptId: string | null;
  result: unknown;
}

type Checkable = NonNullable<Requirements['checkable']>;

/** The task's checkable mark, when its result is one the job goes on with (the main run or a shard). */
export function checkableOf(task: Pick<CheckedTask, 'role' | 'requirements'>): Checkable | null {
  if (task.role !== 'RUN' && task.role !== 'SHARD') return null;
  return (task.requirements as Requirements | null)?.checkable ?? null;
}

const SETTLED = new Set(['SKIPPED', 'MATCHED', 'RESOLVED', 'UNCHECKED']);

/** A settled check's result for the job to go on with; null while the check is under way (or failed the job). */
function settledResult(check: Pick<ResultCheck, 'status' | 'verifiedResult'>): CheckedResult | null {
  return SETTLED.has(check.status) ? ((check.verifiedResult ?? {}) as CheckedResult) : null;
}

/**
 * The result of a finished task that the job may go on with: its own when it is not checkable
 * (or failed), the verified one when its check has settled; null when the job must wait (the
 * check is under way: its replica or tie-breaker will advance the job again). The first call for
 * a succeeded checkable task decides whether to replicate it.
 */
export async function checkedResult(r: Resources, task: CheckedTask): Promise<CheckedResult | null> {
  const own = (task.result ?? {}) as CheckedResult;
  const mark = checkableOf(task);
  if (task.status !== 'SUCCEEDED' || !mark || !task.currentAttemptId) return own;
  const existing = await r.prisma.resultCheck.findUnique({ where: { taskId: task.id } });
  if (existing) return settledResult(existing);
  const attempt = await r.prisma.attempt.findUniqueOrThrow({ where: { id: task.currentAttemptId }, include: { worker: true } });
  const decision = decideReplication(attempt.worker, randomDraw(), r.config.trust);
  // A network of one owner has no independent worker to replicate on: accepted unverified, saying so.
  const independent = decision.replicate ? await independentWorkers(r, task, [attempt.worker.ownerId]) : 1;
  const made = await commitTransition(r, task.jobId, async (tx, now) => {
    const status = await lockJob(tx, task.jobId);
    const again = await tx.resultCheck.findUnique({ where: { taskId: task.id } });
    if (again || status !== 'RUNNING') return { eventIds: [], check: again, queued: false };
    const words = `${Math.round(decision.share * 100)}% of ${attempt.worker.name}'s checkable results are replicated (reputation ${decision.reputation.toFixed(2)}, ${attempt.worker.validatedCount} confirmed, ${attempt.worker.mismatchCount} wrong)`;
    if (!decision.replicate || independent === 0) {
      const report = decision.replicate
        ? `Sampled (${words}), but no worker of another owner is online to replicate on: accepted unverified.`
        : `Not sampled: ${words}.`;
      const check = await tx.resultCheck.create({
        data: {
          jobId: task.jobId,
          taskId: task.id,
          attemptId: attempt.id,
          workerId: attempt.workerId,
          ...pick(decision),
          status: decision.replicate ? 'UNCHECKED' : 'SKIPPED',
          verifiedResult: own as P.InputJsonValue,
          settledAt: now,
          report,
        },
      });
      const ev = await recordJobEvent(tx, task.jobId, 'trust.check', {
        step: 'sampled',
        taskId: task.id,
        task: task.name,
        worker: attempt.worker.name,
        replicated: false,
        ...pick(decision),
        reason: report,
      });
      return { eventIds: [ev], check, queued: false };
    }
    const { task: replica, eventId } = await insertTask(tx, now, followUp(task, 'REPLICA', [attempt.worker.ownerId]));
    const check = await tx.resultCheck.create({
      data: {
        jobId: task.jobId,
        taskId: task.id,
        attemptId: attempt.id,
        workerId: attempt.workerId,
        ...pick(decision),
        status: 'REPLICATING',
        replicaTaskId: replica.id,
        report: `Sampled: ${words}; replicating on a worker of another owner.`,
      },
    });
    const ev = await recordJobEvent(tx, task.jobId, 'trust.check', {
      step: 'sampled',
      taskId: task.id,
      task: task.name,
      worker: attempt.worker.name,
      replicated: true,
      replicaTaskId: replica.id,
      ...pick(decision),
      reason: check.report,
    });
    return { eventIds: [eventId, ev], check, queued: true };
  });
  if (made.queued) await r.events.emit({ type: 'tasks.available' });
  return made.check ? settledResult(made.check) : null;
}

/**
 * Online workers that could take the task's replica: the claim's eligibility (explainWait.ts
 * canRunOn) for the replica as it would be queued — another owner, trusted enough, and the
 * original's workload, accelerator and memory (a retry's raised memory included).
 */
async function independentWorkers(r: Resources, task: CheckedTask, avoidOwners: string[]): Promise<number> {
  const replica = taskRow(followUp(task, 'REPLICA', avoidOwners), new Date());
  const online = await onlineWorkers(r.prisma);
  return online.filter((w) => canRunOn(replica, w, r.config.trust.minReputation)).length;
}

const pick = (d: { reputation: number; share: number; draw: number }) => ({ reputation: d.reputation, share: d.share, draw: d.draw });

/** A replica or tie-breaker: the original's code, command, inputs and needs, off the given owners' workers. */
function followUp(t: CheckedTask, role: 'REPLICA' | 'TIEBREAK', avoidOwners: string[]) {
  const requirements = { ...(t.requirements as Requirements), avoidOwners };
  return {
    jobId: t.jobId,
    kind: 'PROBE' as const,
    role,
    name: `${role === 'REPLICA' ? REPLICA_PREFIX : TIEBREAK_PREFIX}${t.name}`,
    codeVersionId: t.codeVersionId,
    command: t.command,
    environment: (t.environment ?? {}) as Record<string, unknown>,
    requirements,
    maxAttempts: 3,
    // Ahead of the job's other queued work: the job waits on it.
    priority: 1,
  };
}

/**
 * Replicas and tie-breakers claimable for longer than `waitSec` (since runAfter) that no online
 * worker can take now (the other owners' workers went away, or none is big enough): failed for
 * good, saying why, so their check settles like any failed replica (the original accepted
 * unverified; after a mismatch the job fails) instead of the job waiting for a worker that may
 * never come. In the tick's transaction; the caller records the events and emits task.finished.
 */
export async function giveUpUnplaceableChecks(
  tx: Db,
  now: Date,
  waitSec: number,
  minReputation: number,
): Promise<{ jobId: string; taskId: string; name: string; reason: string }[]> {
  const waiting = await tx.task.findMany({
    where: {
      role: { in: ['REPLICA', 'TIEBREAK'] },
      status: 'QUEUED',
      runAfter: { lt: new Date(now.getTime() - waitSec * 1000) },
    },
    take: 100,
  });
  if (!waiting.length) return [];
  const online = await onlineWorkers(tx);
  const given: { jobId: string; taskId: string; name: string; reason: string }[] = [];
  for (const t of waiting) {
    if (online.some((w) => canRunOn(t, w, minReputation))) continue;
    const waited = waitSec < 120 ? `${waitSec} s` : `${Math.round(waitSec / 60)} min`;
    const reason = `Given up after ${waited}: ${t.statusReason?.replace(/\.$/, '') ?? 'no online worker can run it'}`;
    const moved = await moveTasks(tx, { id: t.id }, ['QUEUED'], 'FAILED', { statusReason: reason, finishedAt: now });
    if (moved) given.push({ jobId: t.jobId, taskId: t.id, name: t.name, reason });
  }
  return given;
}

/** Is this task a replica or tie-breaker of a trust check? */
export function isCheckTask(task: { role: string }): boolean {
  return task.role === 'REPLICA' || task.role === 'TIEBREAK';
}

/**
 * A replica or tie-breaker finished: the comparison and its consequences (see the file comment).
 * Returns the original task's id when the check settled and the job may go on with it.
 */
export async function afterCheckTask(
  r: Resources,
  probe: {
    id: string;
    jobId: string;
    name: string;
    status: string;
    result: unknown;
    currentAttemptId: string | null;
    statusReason: string | null;
  },
): Promise<string | null> {
  const check = await r.prisma.resultCheck.findFirst({ where: { OR: [{ replicaTaskId: probe.id }, { tiebreakTaskId: probe.id }] } });
  if (!check) return null;
  const isReplica = check.replicaTaskId === probe.id;
  if ((isReplica && check.status !== 'REPLICATING') || (!isReplica && check.status !== 'TIEBREAK'))
    return SETTLED.has(check.status) ? check.taskId : null;
  const original = await r.prisma.task.findUniqueOrThrow({ where: { id: check.taskId } });
  const mark = checkableOf(original) ?? {};
  const outputsOf = (t: { result: unknown }) => ((t.result ?? {}) as CheckedResult).outputs ?? [];
  const workerOf = async (attemptId: string | null) =>
    attemptId
      ? r.prisma.attempt.findUnique({
          where: { id: attemptId },
          select: { id: true, worker: { select: { id: true, name: true, ownerId: true, reputation: true } } },
        })
      : null;
  const first = await workerOf(check.attemptId);
  const here = await workerOf(probe.currentAttemptId);
  const criteria = toleranceCriteria(mark.tolerance);
  const compare = (a: { result: unknown }, b: { result: unknown }) =>
    compareTaskOutputs(r, outputsOf(a), outputsOf(b), {
      ...(mark.compare ? { compare: mark.compare } : {}),
      ...(criteria ? { criteria } : {}),
    });

  if (isReplica) {
    if (probe.status !== 'SUCCEEDED')
      return settle(r, check, 'REPLICATING', {
        status: 'UNCHECKED',
        verifiedResult: original.result,
        report: `The replica could not run (${probe.statusReason ?? 'no reason recorded'}): ${first?.worker.name ?? 'the worker'}'s result is accepted unverified.`,
      });
    let report: ComparisonReport;
    try {
      report = await compare(original, probe);
    } catch (err) {
      if (!(err instanceof ComparisonError)) throw err;
      return settle(r, check, 'REPLICATING', {
        status: 'UNCHECKED',
        verifiedResult: original.result,
        report: `The API could not compare the results (${err.message}): accepted unverified.`,
      });
    }
    if (report.ok) {
      return settle(r, check, 'REPLICATING', {
        status: 'MATCHED',
        verifiedResult: original.result,
        confirmed: [first?.worker.id, here?.worker.id],
        report: `Replicated on ${here?.worker.name}: matched ${first?.worker.name}'s result (${summarize(report)}).`,
        event: { replicaWorker: here?.worker.name ?? null, comparison: brief(report) },
      });
    }
    // They differ: a third run on a worker of neither owner decides.
    const owners = [first?.worker.ownerId, here?.worker.ownerId].filter((x): x is string => !!x);
    const moved = await commitTransition(r, check.jobId, async (tx, now) => {
      if ((await lockJob(tx, check.jobId)) !== 'RUNNING') return { eventIds: [], moved: false };
      const least = tieBreakerReputation(first?.worker.reputation ?? 0, here?.worker.reputation ?? 0, r.config.trust);
      const spec = followUp(original, 'TIEBREAK', [...new Set(owners)]);
      const { task: tb, eventId } = await insertTask(tx, now, { ...spec, requirements: { ...spec.requirements, minReputation: least } });
      const reason = `Replicated on ${here?.worker.name}: MISMATCH with ${first?.worker.name}'s result (${summarize(report, first?.worker.name, here?.worker.name)}); a tie-breaker runs on a worker of neither owner with reputation ≥ ${least.toFixed(2)}.`;
      const n = await tx.resultCheck.updateMany({
        where: { id: check.id, status: 'REPLICATING' },
        data: { status: 'TIEBREAK', tiebreakTaskId: tb.id, report: reason },
      });
      if (n.count === 0) throw new MovedError();
      const ev = await recordJobEvent(tx, check.jobId, 'trust.check', {
        step: 'mismatch',
        taskId: original.id,
        task: original.name,
        worker: first?.worker.name ?? null,
        replicaWorker: here?.worker.name ?? null,
        tiebreakTaskId: tb.id,
        comparison: brief(report),
        reason,
      } as P.InputJsonValue);
      return { eventIds: [eventId, ev], moved: true };
    }).catch((err) => (err instanceof MovedError ? { eventIds: [], moved: false } : Promise.reject(err)));
    if (moved.moved) await r.events.emit({ type: 'tasks.available' });
    return null;
  }

  // The tie-breaker.
  const replica = await r.prisma.task.findUniqueOrThrow({ where: { id: check.replicaTaskId! } });
  const second = await workerOf(replica.currentAttemptId);
  if (probe.status !== 'SUCCEEDED') {
    await settle(r, check, 'TIEBREAK', {
      status: 'UNRESOLVED',
      report: `${first?.worker.name} and ${second?.worker.name} returned different results and the tie-breaker could not run (${probe.statusReason ?? 'no reason recorded'}): neither result can be trusted.`,
      failJob: true,
    });
    return null;
  }
  let withOriginal: ComparisonReport, withReplica: ComparisonReport;
  try {
    [withOriginal, withReplica] = [await compare(original, probe), await compare(replica, probe)];
  } catch (err) {
    if (!(err instanceof ComparisonError)) throw err;
    await settle(r, check, 'TIEBREAK', {
      status: 'UNRESOLVED',
      report: `${first?.worker.name} and ${second?.worker.name} returned different results and the API could not compare the tie-breaker's (${err.message}).`,
      failJob: true,
    });
    return null;
  }
  const verdict = tieBreak(withOriginal.ok, withReplica.ok);
  if (verdict === 'unresolved') {
    await settle(r, check, 'TIEBREAK', {
      status: 'UNRESOLVED',
      report: `Three workers disagree: ${first?.worker.name}, ${second?.worker.name} and the tie-breaker ${here?.worker.name} returned three different results (${summarize(withOriginal, first?.worker.name, here?.worker.name)}; ${summarize(withReplica, second?.worker.name, here?.worker.name)}): the output is not reproducible within the plan's tolerances.`,
      failJob: true,
    });
    return null;
  }
  const [right, wrong, rightTask] = verdict === 'original' ? [first, second, original] : [second, first, replica];
  return settle(r, check, 'TIEBREAK', {
    status: 'RESOLVED',
    verifiedResult: rightTask.result,
    confirmed: [right?.worker.id, here?.worker.id],
    wrong: wrong ? { workerId: wrong.worker.id, attemptId: wrong.id } : null,
    report: `Tie-breaker on ${here?.worker.name}: agrees with ${right?.worker.name}; ${wrong?.worker.name}'s result was wrong (${verdict === 'original' ? summarize(withReplica, second?.worker.name, here?.worker.name) : summarize(withOriginal, first?.worker.name, here?.worker.name)}) and it loses reputation. The job goes on with ${verdict === 'original' ? 'the original' : "the replica's"} result.`,
    event: {
      tiebreakWorker: here?.worker.name ?? null,
      right: right?.worker.name ?? null,
      wrong: wrong?.worker.name ?? null,
      comparison: brief(verdict === 'original' ? withReplica : withOriginal),
    },
  });
}

class MovedError extends Error {}

interface Settlement {
  status: 'MATCHED' | 'RESOLVED' | 'UNRESOLVED' | 'UNCHECKED';
  verifiedResult?: unknown;
  report: string;
  /** Workers whose result the comparison confirmed (+1 validated each). */
  confirmed?: (string | undefined)[];
  /** The worker found wrong (+1 mismatch) and its attempt (the contributor's loss). */
  wrong?: { workerId: string; attemptId: string } | null;
  failJob?: boolean;
  event?: Record<string, unknown>;
}

/**
 * Settles the check from `from` (a conditional update: once across callers), updates the
 * workers' records and reputations, writes the wrong attempt's usage off, records the event,
 * and fails the job when told. Returns the original task's id when the job may go on.
 */
async function settle(r: Resources, check: ResultCheck, from: 'REPLICATING' | 'TIEBREAK', s: Settlement): Promise<string | null> {
  const res = await commitTransition(r, check.jobId, async (tx, now) => {
    if ((await lockJob(tx, check.jobId)) !== 'RUNNING') return { eventIds: [], moved: false };
    const n = await tx.resultCheck.updateMany({
      where: { id: check.id, status: from },
      data: {
        status: s.status,
        report: s.report,
        settledAt: now,
        ...(s.verifiedResult !== undefined ? { verifiedResult: s.verifiedResult as P.InputJsonValue } : {}),
        ...(s.wrong ? { wrongWorkerIds: [s.wrong.workerId] } : {}),
      },
    });
    if (n.count === 0) return { eventIds: [], moved: false };
    for (const id of new Set(s.confirmed?.filter((x): x is string => !!x) ?? [])) await countOutcome(tx, r, id, 'validatedCount');
    if (s.wrong) {
      await countOutcome(tx, r, s.wrong.workerId, 'mismatchCount');
      await writeOffAttemptUsage(tx, [s.wrong.attemptId]);
    }
    const step = { MATCHED: 'matched', RESOLVED: 'resolved', UNRESOLVED: 'unresolved', UNCHECKED: 'unchecked' }[s.status];
    const eventIds = [
      await recordJobEvent(tx, check.jobId, 'trust.check', {
        step,
        taskId: check.taskId,
        ...(s.event ?? {}),
        reason: s.report,
      } as P.InputJsonValue),
    ];
    if (s.failJob) eventIds.push(...(await applyTransition(tx, now, check.jobId, 'fail', { reason: s.report })).eventIds);
    return { eventIds, moved: true };
  });
  return res.moved && !s.failJob ? check.taskId : null;
}

/** One more confirmed (or wrong) result for a worker, and its reputation from the one rule (under the row lock the increment takes). */
async function countOutcome(tx: Db, r: Resources, workerId: string, field: 'validatedCount' | 'mismatchCount') {
  const w = await tx.worker.update({
    where: { id: workerId },
    data: { [field]: { increment: 1 } },
    select: { validatedCount: true, mismatchCount: true },
  });
  await tx.worker.update({ where: { id: workerId }, data: { reputation: reputationOf(w, r.config.trust) } });
}

/** The comparison in words; the two sides named (reference `a`, candidate `b`). */
function summarize(report: ComparisonReport, a = 'reference', b = 'candidate'): string {
  const bad = report.files.filter((f) => !f.ok);
  if (!bad.length) return `${report.summary.files} file(s) within tolerance`;
  return bad
    .slice(0, 3)
    .map((f) => {
      const m = f.metrics?.find((x) => !x.ok);
      const t = f.tensors?.find((x) => !x.ok);
      if (m) return `${f.path}: ${m.name} ${JSON.stringify(m.reference)} (${a}) vs ${JSON.stringify(m.candidate)} (${b})`;
      if (t) return `${f.path}: ${t.name} max abs error ${t.max_abs_error} (${a} vs ${b})`;
      return `${f.path}: ${f.problem ?? f.kind}`;
    })
    .join('; ');
}

const brief = (report: ComparisonReport) =>
  ({
    ok: report.ok,
    summary: report.summary,
    failed: report.files
      .filter((f) => !f.ok)
      .map((f) => f.path)
      .slice(0, 20),
  }) as unknown as P.InputJsonValue;

/** The verified results of the job's checked tasks, by task id (what jobOutputs serves instead of a wrong one). */
export async function verifiedResults(prisma: Resources['prisma'], jobId: string): Promise<Map<string, CheckedResult>> {
  const rows = await prisma.resultCheck.findMany({ where: { jobId, status: 'RESOLVED' }, select: { taskId: true, verifiedResult: true } });
  return new Map(rows.map((c) => [c.taskId, (c.verifiedResult ?? {}) as CheckedResult]));
}

/**
 * What the job's replicas and tie-breakers cost: billable (in Job.costCad, counted by the cap)
 * and shown apart; a replica found wrong is the contributor's loss like any wrong result.
 */
export async function replicationCostCad(prisma: Resources['prisma'], jobId: string): Promise<{ costCad: number; lostCostCad: number }> {
  const rows = await prisma.usageEntry.groupBy({
    by: ['billable'],
    where: {
      jobId,
      attempt: { task: { role: { in: ['REPLICA', 'TIEBREAK'] } } },
    },
    _sum: { costCad: true },
  });
  const sum = (billable: boolean) => Number(rows.find((x) => x.billable === billable)?._sum.costCad ?? 0);
  return { costCad: sum(true), lostCostCad: sum(false) };
}
