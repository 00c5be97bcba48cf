/**
 * Where the agents keep their work (docs/architecture.md §7, invariant 5): runs, their items in order,
 * the Action rows of side effects, and the job's agent lock. agents/loop.ts decides what
 * to do; this module is how it is stored. Every saved item is also an `agent.item` job
 * event, published after its transaction commits, so the dashboard shows each step.
 */
import type { Prisma as P } from '../../generated/prisma/client.js';
import type { AgentItemStatus, AgentRunStatus } from '../../generated/prisma/enums.js';
import type { Db, Tx } from '../../db/client.js';
import { databaseUnavailable, retryThroughOutage } from '../../db/unavailable.js';
import type { DomainEvent } from '../events.js';
import { recordJobEvent } from '../jobs/jobEvents.js';
import { publishJobEvents } from '../jobs/jobLifecycle.js';
import type { Resources } from '../resources.js';

/** The item shapes of the Responses API the loop stores (agents/models/types.ts `Item`). */
export type StoredItem =
  | { type: 'message'; role: 'user' | 'assistant' | 'system' | 'developer'; content: string }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string }
  | { type: 'reasoning'; summary: { text: string }[]; [k: string]: unknown };

// ───────────────────────────── the agent lock ─────────────────────────────

/**
 * One agent run per job at a time: a lease in the Job row (holder + expiry) taken or
 * renewed with one conditional UPDATE, so a crashed holder's lock expires by itself.
 */
export async function acquireAgentLock(r: Resources, jobId: string, holder: string, ms: number): Promise<boolean> {
  const now = r.now();
  const res = await r.prisma.job.updateMany({
    where: { id: jobId, OR: [{ agentLockUntil: null }, { agentLockUntil: { lt: now } }, { agentLockHolder: holder }] },
    data: { agentLockHolder: holder, agentLockUntil: new Date(now.getTime() + ms) },
  });
  return res.count === 1;
}

/**
 * Gives the lock back. A database restart does not make it fail: it is retried through the
 * outage (for up to a lock lease), and if the database stays away the lock expires by itself —
 * logged, never thrown over the result of the turn that held it.
 */
export async function releaseAgentLock(r: Resources, jobId: string, holder: string, waitMs = 15_000): Promise<void> {
  try {
    await retryThroughOutage(
      () =>
        r.prisma.job.updateMany({ where: { id: jobId, agentLockHolder: holder }, data: { agentLockHolder: null, agentLockUntil: null } }),
      waitMs,
    );
  } catch (err) {
    if (!databaseUnavailable(err)) throw err;
    r.log.warn('agent lock not released (the database is unavailable); it expires by itself', { jobId, reason: databaseUnavailable(err) });
  }
}

/** Who holds the job's agent lock now (sub-runs run under their parent's holder). */
export async function agentLockHolder(r: Resources, jobId: string): Promise<string | null> {
  const job = await r.prisma.job.findUniqueOrThrow({ where: { id: jobId }, select: { agentLockHolder: true } });
  return job.agentLockHolder;
}

// ───────────────────────────── runs ─────────────────────────────

export async function createRun(r: Resources, input: { jobId: string; agent: string; model: string; parentId?: string | null }) {
  return r.prisma.agentRun.create({
    data: { jobId: input.jobId, agent: input.agent, model: input.model, parentId: input.parentId ?? null },
  });
}

export async function loadRun(r: Resources, runId: string) {
  return r.prisma.agentRun.findUniqueOrThrow({ where: { id: runId } });
}

/** Sets the run's status and announces it (an `agent.run` job event) unless `quiet`. */
export async function setRunStatus(
  r: Resources,
  run: { id: string; jobId: string; agent: string },
  status: AgentRunStatus,
  stopReason: string | null,
  opts: { quiet?: boolean } = {},
) {
  await r.prisma.agentRun.update({ where: { id: run.id }, data: { status, stopReason } });
  if (opts.quiet) return;
  const eventId = await recordJobEvent(r.prisma, run.jobId, 'agent.run', { runId: run.id, agent: run.agent, status, stopReason });
  await r.events.emit({ type: 'job.event', jobId: run.jobId, eventId });
}

/** The job's latest run of an agent (e.g. the planner), or null. */
export async function latestRun(r: Resources, jobId: string, agent: string) {
  return r.prisma.agentRun.findFirst({ where: { jobId, agent }, orderBy: { createdAt: 'desc' } });
}

// ───────────────────────────── items ─────────────────────────────

export async function pendingCalls(r: Resources, runId: string) {
  return r.prisma.agentItem.findMany({ where: { runId, type: 'function_call', status: 'PENDING' }, orderBy: { seq: 'asc' } });
}

export async function knownCallIds(r: Resources, runId: string): Promise<Set<string | null>> {
  const rows = await r.prisma.agentItem.findMany({ where: { runId, type: 'function_call' }, select: { callId: true } });
  return new Set(rows.map((x) => x.callId));
}

/** The user messages a run already has (so an answer is never appended twice). */
export async function userMessages(r: Resources, runId: string): Promise<Set<string>> {
  const rows = await r.prisma.agentItem.findMany({ where: { runId, type: 'message' }, select: { payload: true } });
  return new Set(rows.map((i) => (i.payload as { content?: string }).content ?? ''));
}

/**
 * The call id of an earlier call in the run of tool `name` with the same arguments (`args`,
 * parsed; key order ignored) that got a DONE output, or null.
 */
export async function earlierSameCall(
  r: Resources,
  runId: string,
  name: string,
  args: unknown,
  exceptCallId: string,
): Promise<string | null> {
  const canonical = (v: unknown): string =>
    JSON.stringify(v, (_k, x) =>
      x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
    );
  const want = canonical(args);
  const calls = await r.prisma.agentItem.findMany({
    where: { runId, type: 'function_call', name },
    select: { callId: true, payload: true },
  });
  const done = new Set(
    (
      await r.prisma.agentItem.findMany({
        where: {
          runId,
          type: 'function_call_output',
          status: 'DONE',
          callId: { in: calls.map((c) => c.callId).filter((c): c is string => !!c) },
        },
        select: { callId: true },
      })
    ).map((o) => o.callId),
  );
  for (const c of calls) {
    if (c.callId === exceptCallId || !done.has(c.callId)) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse((c.payload as { arguments?: string }).arguments || '{}');
    } catch {
      continue;
    }
    if (canonical(parsed) === want) return c.callId;
  }
  return null;
}

/** Every saved item in order. */
export async function runItems(r: Resources, runId: string) {
  return r.prisma.agentItem.findMany({ where: { runId }, orderBy: { seq: 'asc' } });
}

export type SaveSpec = { item: StoredItem; status: Exclude<AgentItemStatus, never> };

function jsonable(v: unknown): P.InputJsonValue {
  return JSON.parse(JSON.stringify(v ?? null)) as P.InputJsonValue;
}

async function nextSeq(tx: Tx, runId: string): Promise<number> {
  const last = await tx.agentItem.findFirst({ where: { runId }, orderBy: { seq: 'desc' }, select: { seq: true } });
  return (last?.seq ?? -1) + 1;
}

/** Appends items to the run, in one transaction, and announces each. */
export async function saveItems(r: Resources, run: { id: string; jobId: string; agent: string }, specs: SaveSpec[]) {
  if (specs.length === 0) return [];
  const emits: DomainEvent[] = [];
  const saved = await r.prisma.$transaction(async (tx) => {
    let seq = await nextSeq(tx, run.id);
    const out: (SaveSpec & { id: string })[] = [];
    for (const s of specs) {
      const row = await tx.agentItem.create({
        data: {
          runId: run.id,
          seq: seq++,
          type: s.item.type,
          callId: s.item.type === 'function_call' || s.item.type === 'function_call_output' ? s.item.call_id : null,
          name: s.item.type === 'function_call' ? s.item.name : null,
          payload: jsonable(s.item),
          status: s.status,
        },
      });
      out.push({ ...s, id: row.id });
      emits.push({ type: 'job.event', jobId: run.jobId, eventId: await itemEvent(tx, run, row.seq, s.item, s.status) });
    }
    return out;
  });
  for (const e of emits) await r.events.emit(e);
  return saved;
}

/** Saves a call's output and settles the call item's status, in one transaction. */
export async function saveOutput(
  r: Resources,
  run: { id: string; jobId: string; agent: string },
  callItemId: string,
  callId: string,
  output: string,
  status: 'DONE' | 'REJECTED' | 'UNCERTAIN',
) {
  const item: StoredItem = { type: 'function_call_output', call_id: callId, output };
  const emits: DomainEvent[] = [];
  await r.prisma.$transaction(async (tx) => {
    const row = await tx.agentItem.create({
      data: { runId: run.id, seq: await nextSeq(tx, run.id), type: item.type, callId, payload: jsonable(item), status },
    });
    await tx.agentItem.update({ where: { id: callItemId }, data: { status } });
    emits.push({ type: 'job.event', jobId: run.jobId, eventId: await itemEvent(tx, run, row.seq, item, status) });
  });
  for (const e of emits) await r.events.emit(e);
}

/** A note for people (shown on the job page), never sent to the model. */
export async function saveNote(r: Resources, run: { id: string; jobId: string; agent: string }, text: string) {
  const emits: DomainEvent[] = [];
  await r.prisma.$transaction(async (tx) => {
    const row = await tx.agentItem.create({
      data: { runId: run.id, seq: await nextSeq(tx, run.id), type: 'note', payload: { type: 'note', text }, status: 'DONE' },
    });
    emits.push({
      type: 'job.event',
      jobId: run.jobId,
      eventId: await recordJobEvent(tx, run.jobId, 'agent.item', {
        runId: run.id,
        agent: run.agent,
        seq: row.seq,
        type: 'note',
        status: 'DONE',
        text,
      }),
    });
  });
  for (const e of emits) await r.events.emit(e);
}

async function itemEvent(tx: Tx, run: { id: string; jobId: string; agent: string }, seq: number, item: StoredItem, status: string) {
  const base = { runId: run.id, agent: run.agent, seq, type: item.type, status };
  const payload =
    item.type === 'function_call'
      ? { ...base, name: item.name, callId: item.call_id, arguments: item.arguments.slice(0, 4000) }
      : item.type === 'function_call_output'
        ? { ...base, callId: item.call_id, output: item.output.slice(0, 4000) }
        : item.type === 'message'
          ? { ...base, role: item.role, text: item.content.slice(0, 4000) }
          : {
              ...base,
              text: item.summary
                .map((s) => s.text)
                .join('\n')
                .slice(0, 4000),
            };
  return recordJobEvent(tx, run.jobId, 'agent.item', payload);
}

// ───────────────────────────── actions ─────────────────────────────

export async function findAction(r: Resources, jobId: string, callId: string) {
  return r.prisma.action.findUnique({ where: { jobId_idempotencyKey: { jobId, idempotencyKey: callId } } });
}

/** The agent lock was lost (expired and taken over) before a side effect could commit. */
export class AgentLockLostError extends Error {
  override name = 'AgentLockLostError';
  constructor(
    readonly jobId: string,
    readonly holder: string,
  ) {
    super(`The agent lock of job ${jobId} is no longer held by this run; nothing was done.`);
  }
}

export interface EffectResult {
  output: unknown;
  eventIds?: string[];
}

/**
 * Runs a side effect with its Action row (idempotency key = the tool call id, unique per
 * job) in one transaction: a crash leaves both or neither. A second call with the same id
 * fails on the key's uniqueness and does nothing. The transaction first verifies that
 * `holder` still holds the job's agent lock, with a conditional UPDATE of the job row
 * that keeps the row locked until commit: a run whose lease expired and was taken over
 * cannot act (AgentLockLostError), and no takeover can slip in before the effect commits.
 * Publishes the effect's job events after commit.
 */
export async function runAction<T extends EffectResult>(
  r: Resources,
  input: { jobId: string; holder: string; callId: string; kind: string; args: unknown },
  effect: (tx: Tx) => Promise<T>,
): Promise<T> {
  const result = await r.prisma.$transaction(
    async (tx) => {
      const held = await tx.job.updateMany({
        where: { id: input.jobId, agentLockHolder: input.holder, agentLockUntil: { gt: r.now() } },
        data: { agentLockHolder: input.holder },
      });
      if (held.count !== 1) throw new AgentLockLostError(input.jobId, input.holder);
      await tx.action.create({ data: { jobId: input.jobId, idempotencyKey: input.callId, kind: input.kind, input: jsonable(input.args) } });
      const res = await effect(tx);
      await tx.action.update({
        where: { jobId_idempotencyKey: { jobId: input.jobId, idempotencyKey: input.callId } },
        data: { status: 'DONE', outcome: jsonable(res.output), finishedAt: r.now() },
      });
      return res;
    },
    { timeout: 30_000 },
  );
  await publishJobEvents(r, input.jobId, result.eventIds ?? []);
  return result;
}

// ───────────────────────────── what the pipeline resumes ─────────────────────────────

/** Answers the user gave to the planner's questions, oldest first. */
/** The job's answered questions (of one run, when given) the run has not seen yet, as user messages. */
export async function unseenAnswers(r: Resources, jobId: string, runId: string, onlyAskedBy?: string) {
  const seen = await userMessages(r, runId);
  return (await answeredQuestions(r, jobId))
    .filter((q) => !onlyAskedBy || q.agentRunId === onlyAskedBy)
    .map(answerText)
    .filter((t) => !seen.has(t))
    .map((content) => ({ type: 'message' as const, role: 'user' as const, content }));
}

/** An answer as the asking agent reads it in its history. */
const answerText = (q: { text: string; answer: string | null }) => `Answer to "${q.text}": ${q.answer}`;

/** The answers to the questions an agent's earlier runs asked on this job (a replan's new planner run starts with them). */
export async function answersToAgent(r: Resources, jobId: string, agent: string) {
  const runs = new Set((await r.prisma.agentRun.findMany({ where: { jobId, agent }, select: { id: true } })).map((x) => x.id));
  return (await answeredQuestions(r, jobId))
    .filter((q) => runs.has(q.agentRunId!))
    .map((q) => ({ type: 'message' as const, role: 'user' as const, content: answerText(q) }));
}

export async function answeredQuestions(r: Resources, jobId: string) {
  return r.prisma.question.findMany({ where: { jobId, status: 'ANSWERED', agentRunId: { not: null } }, orderBy: { answeredAt: 'asc' } });
}

export async function openQuestionCount(r: Resources, jobId: string, db: Db = r.prisma): Promise<number> {
  return db.question.count({ where: { jobId, status: 'OPEN' } });
}

/**
 * Jobs whose planner a crashed process left behind: PLANNING, or NEEDS_INPUT with the
 * planner run still RUNNING (the crash came right after ask_user committed), with no live
 * agent lock and untouched for `quietMs`. Recovery keys on the run, not only the status.
 */
export async function orphanedPlanning(r: Resources, agent: string, now: Date, quietMs: number): Promise<string[]> {
  const rows = await r.prisma.job.findMany({
    where: {
      OR: [{ status: 'PLANNING' }, { status: 'NEEDS_INPUT', agentRuns: { some: { agent, status: 'RUNNING' } } }],
      AND: [{ OR: [{ agentLockUntil: null }, { agentLockUntil: { lt: now } }] }],
      updatedAt: { lt: new Date(now.getTime() - quietMs) },
    },
    select: { id: true },
    take: 10,
  });
  return rows.map((j) => j.id);
}

/**
 * Run-supervisor runs a crashed process left behind, on jobs nobody holds: RUNNING ones (a
 * call may be PENDING with its Action committed; on an ended job, a look back at it), and WAITING ones whose question was
 * answered while no process was there to resume them (the job is RUNNING again). Quiet
 * for `quietMs`; at most 10.
 */
export async function orphanedSupervision(r: Resources, now: Date, quietMs: number): Promise<{ runId: string; jobId: string }[]> {
  // updatedAt is written with the wall clock (Prisma's @updatedAt), not the resources' clock:
  // compare it with the wall clock, or a clock running ahead takes a live run for a quiet one
  // (tests drive r.now() forward) and resumes it beside its own process.
  const quiet = new Date(Date.now() - quietMs);
  const rows = await r.prisma.agentRun.findMany({
    where: {
      agent: 'supervisor',
      updatedAt: { lt: quiet },
      OR: [{ status: 'RUNNING' }, { status: 'WAITING', job: { status: 'RUNNING', questions: { none: { status: 'OPEN' } } } }],
      // STOPPED / FAILED: a run looking back at the ended job (stopped at its cap, output
      // rejected) that a crash cut off; another run of an ended job just ends (job_final).
      job: {
        status: { in: ['RUNNING', 'NEEDS_INPUT', 'STOPPED', 'FAILED'] },
        OR: [{ agentLockUntil: null }, { agentLockUntil: { lt: now } }],
      },
    },
    select: { id: true, jobId: true },
    orderBy: { updatedAt: 'asc' },
    take: 10,
  });
  return rows.map((x) => ({ runId: x.id, jobId: x.jobId }));
}

/** Marks the job as just looked at, so the next reconcile leaves it alone for a while. */
export async function touchJob(r: Resources, jobId: string): Promise<void> {
  await r.prisma.job.update({ where: { id: jobId }, data: { updatedAt: r.now() } });
}
