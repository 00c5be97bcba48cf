/**
 * The durable tool loop — one loop for every agent (planner, specialists, supervisor);
 * only their instructions and tools differ (invariant 5).
 *
 *   1. Take the job's agent lock (one agent run per job at a time; a lease in the Job
 *      row taken with one conditional UPDATE, so a crashed holder's lock expires).
 *   2. Resolve calls left PENDING by a crash — from the Action table, never by blind
 *      re-execution: action DONE → record its outcome; no action → run it once;
 *      action STARTED (unknown) → mark UNCERTAIN and tell the model so it can observe.
 *   3. Until the model stops calling tools or a limit is hit (model calls, tool calls,
 *      wall time — configurable, 8/8/90 s by default):
 *        a. call the model with the whole saved history (the caller owns it);
 *        b. an `incomplete` response dispatches nothing (saved as REJECTED, turn ends);
 *        c. save every output item (function calls as PENDING) BEFORE any side effect;
 *        d. run the calls one at a time: reject duplicate call ids; validate arguments
 *           (JSON, schema, then the tool's scope/limit check) — a rejected call returns
 *           an error to the model instead of acting; side-effecting tools commit their
 *           effect together with an Action row keyed by the call id;
 *        e. save each tool result before the next model call.
 *
 * Every saved item is also a `agent.item` job event, so the dashboard shows each step.
 *
 * AgentRun status: RUNNING ⇄ WAITING (asked the user) → COMPLETED | FAILED.
 */
import { randomUUID } from 'node:crypto';
import type { Prisma as P } from '../generated/prisma/client.js';
import type { DomainEvent } from '../domain/events.js';
import { recordJobEvent } from '../domain/jobs/jobEvents.js';
import type { Resources } from '../domain/resources.js';
import { parseToolArgs } from './models/strictSchema.js';
import type { Item, ModelClient } from './models/types.js';
import { toolSpec, type AgentDef, type ToolContext, type ToolDef, type ToolResult } from './tool.js';

type Tx = Parameters<Parameters<Resources['prisma']['$transaction']>[0]>[0];

export type StopReason =
  | 'done'
  | 'waiting_for_user'
  | 'finished'
  | 'limit_model_calls'
  | 'limit_tool_calls'
  | 'limit_time'
  | 'incomplete_response'
  | 'model_error'
  | 'model_timeout'
  | 'locked';

export interface TurnResult {
  runId: string;
  stopReason: StopReason;
  status: 'RUNNING' | 'WAITING' | 'COMPLETED' | 'FAILED';
  /** The model's last message text, if it ended with one (a specialist's answer). */
  finalText?: string;
}

const MAX_OUTPUT_CHARS = 16_000;

export async function acquireAgentLock(r: Resources, jobId: string, holder: string, ms: number): Promise<boolean> {
  const now = r.now();
  const res = await r.prisma.job.updateMany({
    where: { id: jobId, OR: [{ agentLockUntil: null }, { agentLockUntil: { lt: now } }, { agentLockHolder: holder }] },
    data: { agentLockHolder: holder, agentLockUntil: new Date(now.getTime() + ms) },
  });
  return res.count === 1;
}

export async function releaseAgentLock(r: Resources, jobId: string, holder: string): Promise<void> {
  await r.prisma.job.updateMany({ where: { id: jobId, agentLockHolder: holder }, data: { agentLockHolder: null, agentLockUntil: null } });
}

export interface RunOptions {
  jobId: string;
  agent: AgentDef;
  model: ModelClient;
  /** Continue this run (its saved history); otherwise a new run is created. */
  runId?: string;
  parentRunId?: string;
  /** Items to append before the first model call (the task, or the user's answer). */
  input?: Item[];
  /** Sub-runs run under their parent's lock. */
  lockHolder?: string;
}

/**
 * The agent lock's lease. Fix: it was (turnSec + 30) s (120 s by default) and renewed
 * only before each model call, so after a crash the job stayed locked — its PENDING
 * calls unresolved — for up to two minutes. Now the lease is short and a timer renews
 * it while the turn runs; a crashed holder's lock expires within LOCK_LEASE_MS.
 */
export const LOCK_LEASE_MS = 15_000;
const LOCK_RENEW_MS = 5_000;

export async function runAgentTurn(r: Resources, opts: RunOptions): Promise<TurnResult> {
  const holder = opts.lockHolder ?? randomUUID();
  const lockMs = LOCK_LEASE_MS;
  if (!opts.lockHolder && !(await acquireAgentLock(r, opts.jobId, holder, lockMs))) {
    return { runId: opts.runId ?? '', stopReason: 'locked', status: 'RUNNING' };
  }
  // Sub-runs hold their parent's lock, which the parent's timer renews.
  let renewing: Promise<unknown> = Promise.resolve();
  const timer = opts.lockHolder
    ? null
    : setInterval(() => {
        // Chained, so the finally below waits for every renewal, not just the last one.
        renewing = renewing.then(() => acquireAgentLock(r, opts.jobId, holder, lockMs)).catch(() => false);
      }, LOCK_RENEW_MS);
  try {
    return await turn(r, opts, holder, lockMs);
  } finally {
    if (timer) clearInterval(timer);
    await renewing; // a renewal landing after the release would lock the job again
    if (!opts.lockHolder) await releaseAgentLock(r, opts.jobId, holder);
  }
}

async function turn(r: Resources, opts: RunOptions, holder: string, lockMs: number): Promise<TurnResult> {
  const { agent, model, jobId } = opts;
  const limits = r.config.agents;
  const started = Date.now();
  const run = opts.runId
    ? await r.prisma.agentRun.findUniqueOrThrow({ where: { id: opts.runId } })
    : await r.prisma.agentRun.create({ data: { jobId, agent: agent.name, model: model.name, parentId: opts.parentRunId ?? null } });
  const ctxFor = (callId: string): ToolContext => ({ r, model, jobId, runId: run.id, callId, agent });
  await r.prisma.agentRun.update({ where: { id: run.id }, data: { status: 'RUNNING', stopReason: null } });
  if (!opts.runId) await emitRun(r, jobId, run.id, agent.name, 'RUNNING', null);

  const finish = async (stopReason: StopReason, status: TurnResult['status'], finalText?: string): Promise<TurnResult> => {
    await r.prisma.agentRun.update({ where: { id: run.id }, data: { status, stopReason } });
    await emitRun(r, jobId, run.id, agent.name, status, stopReason);
    return { runId: run.id, stopReason, status, ...(finalText !== undefined ? { finalText } : {}) };
  };

  // 2. Calls left PENDING by a crash — resolved BEFORE the new input is appended (fix: the
  //    input used to be saved first, so a user's answer landed between the ask_user call
  //    and its output).
  const pending = await r.prisma.agentItem.findMany({ where: { runId: run.id, type: 'function_call', status: 'PENDING' }, orderBy: { seq: 'asc' } });
  let stop: { control: 'wait' | 'finish'; recovered: boolean; name: string } | null = null;
  for (const p of pending) {
    const call = p.payload as unknown as Extract<Item, { type: 'function_call' }>;
    if (stop) {
      await rejectAfterStop(r, jobId, run.id, agent.name, p.id, call.call_id, stop);
      continue;
    }
    const tool = agent.tools.find((t) => t.name === call.name);
    const action = await r.prisma.action.findUnique({ where: { idempotencyKey: call.call_id } });
    if (action?.status === 'DONE' || action?.status === 'FAILED') {
      await saveOutput(r, jobId, run.id, agent.name, p.id, call.call_id, action.outcome ?? { error: 'no outcome recorded' }, 'DONE');
      // Fix: the recorded outcome used to drop the tool's control, so a recovered ask_user
      // went on to call the model again as if the question had been answered.
      if (action.status === 'DONE' && tool?.recoveredControl) stop = { control: tool.recoveredControl, recovered: true, name: call.name };
    } else if (action?.status === 'STARTED') {
      await saveOutput(r, jobId, run.id, agent.name, p.id, call.call_id, { uncertain: true, message: `The ${call.name} action may or may not have happened (the system stopped while it ran). Observe the current state before trying again.` }, 'UNCERTAIN');
    } else {
      const res = await dispatch(r, tool, call, ctxFor(call.call_id), p.id);
      if (res.control) stop = { control: res.control, recovered: false, name: call.name };
    }
  }

  if (opts.input?.length) await saveItems(r, jobId, run.id, agent.name, opts.input.map((item) => ({ item, status: 'DONE' as const })));
  if (stop?.control === 'finish') return finish('finished', 'COMPLETED');
  // A recovered wait (the question was asked before the crash) ends the turn, unless the
  // input brings what it waited for (the user's answer, given while the call was PENDING).
  if (stop?.control === 'wait' && !(stop.recovered && opts.input?.length)) return finish('waiting_for_user', 'WAITING');

  let modelCalls = 0;
  let toolCalls = 0;
  for (;;) {
    const elapsed = Date.now() - started;
    if (elapsed >= limits.turnSec * 1000) return finish('limit_time', 'RUNNING');
    if (modelCalls >= limits.maxModelCalls) return finish('limit_model_calls', 'RUNNING');
    // Renew. Fix: the result was ignored, so a turn whose lease had expired and been taken
    // over kept calling the model and dispatching tools — two runs at once on one job.
    // (Nothing is written to the run then: it belongs to the new holder.)
    if (!(await acquireAgentLock(r, jobId, holder, lockMs))) return { runId: run.id, stopReason: 'locked', status: 'RUNNING' };

    const history = await loadHistory(r, run.id);
    let response;
    try {
      modelCalls++;
      response = await model.respond({
        instructions: agent.instructions,
        input: history,
        tools: agent.tools.map(toolSpec),
        signal: AbortSignal.timeout(Math.max(limits.turnSec * 1000 - elapsed, 1)),
      });
    } catch (err) {
      const e = err as Error;
      const timeout = e.name === 'ModelTimeoutError' || e.name === 'TimeoutError' || e.name === 'AbortError';
      await saveNote(r, jobId, run.id, agent.name, `The model call failed: ${e.message.slice(0, 500)}`);
      return finish(timeout ? 'model_timeout' : 'model_error', 'RUNNING');
    }
    if (response.status !== 'completed') {
      await saveItems(r, jobId, run.id, agent.name, response.output.map((item) => ({ item, status: 'REJECTED' as const })));
      await saveNote(r, jobId, run.id, agent.name, `The model's response was ${response.status}${response.reason ? ` (${response.reason})` : ''}; nothing in it was acted on.`);
      return finish('incomplete_response', 'RUNNING');
    }
    // c. Save the whole output before any side effect; duplicate call ids are rejected.
    const known = new Set((await r.prisma.agentItem.findMany({ where: { runId: run.id, type: 'function_call' }, select: { callId: true } })).map((x) => x.callId));
    const toSave = response.output.map((item) => {
      if (item.type !== 'function_call') return { item, status: 'DONE' as const };
      if (known.has(item.call_id)) return { item, status: 'REJECTED' as const };
      known.add(item.call_id);
      return { item, status: 'PENDING' as const };
    });
    const saved = await saveItems(r, jobId, run.id, agent.name, toSave);
    const calls = saved.filter((s) => s.item.type === 'function_call' && s.status === 'PENDING');
    for (const s of saved) {
      if (s.item.type === 'function_call' && s.status === 'REJECTED') {
        await saveNote(r, jobId, run.id, agent.name, `Rejected a duplicate tool call id ${s.item.call_id}: it was not run again.`);
      }
    }
    // Only duplicate calls (all rejected): not an answer — ask the model again (the note
    // saved above is not in its history; the next call counts against the turn's limits).
    if (calls.length === 0 && saved.some((x) => x.item.type === 'function_call')) continue;
    if (calls.length === 0) {
      const text = [...response.output].reverse().find((i) => i.type === 'message');
      return finish('done', 'COMPLETED', text?.type === 'message' ? text.content : undefined);
    }
    // d. One call at a time.
    let stopped: { control: 'wait' | 'finish'; recovered: boolean; name: string } | null = null;
    for (const c of calls) {
      if (stopped) {
        // Fix: calls after one that paused or finished the run were left PENDING forever
        // (or, after an answer, run on a stale decision). Each call gets exactly one output.
        await rejectAfterStop(r, jobId, run.id, agent.name, c.id, (c.item as { call_id: string }).call_id, stopped);
        continue;
      }
      if (toolCalls >= limits.maxToolCalls) {
        await saveOutput(r, jobId, run.id, agent.name, c.id, (c.item as { call_id: string }).call_id, { error: `Not run: this turn reached its limit of ${limits.maxToolCalls} tool calls.` }, 'REJECTED');
        continue;
      }
      toolCalls++;
      const call = c.item as Extract<Item, { type: 'function_call' }>;
      const res = await dispatch(r, agent.tools.find((t) => t.name === call.name), call, ctxFor(call.call_id), c.id);
      if (res.control) stopped = { control: res.control, recovered: false, name: call.name };
    }
    if (stopped?.control === 'wait') return finish('waiting_for_user', 'WAITING');
    if (stopped?.control === 'finish') return finish('finished', 'COMPLETED');
    if (toolCalls >= limits.maxToolCalls) return finish('limit_tool_calls', 'RUNNING');
  }
}

/** Validates and runs one call, saving its output (and Action for side effects). */
async function dispatch(
  r: Resources,
  tool: ToolDef | undefined,
  call: Extract<Item, { type: 'function_call' }>,
  ctx: ToolContext,
  itemId: string,
): Promise<{ control?: ToolResult['control'] }> {
  const { jobId, runId, agent } = ctx;
  const reject = async (error: string) => {
    await saveOutput(r, jobId, runId, agent.name, itemId, call.call_id, { error }, 'REJECTED');
    return {};
  };
  if (!tool) return reject(`Unknown tool "${call.name}". Available tools: ${agent.tools.map((t) => t.name).join(', ')}.`);
  // JSON, then the schema (strict-mode nulls for optional fields are dropped first).
  const parsed = parseToolArgs(tool.schema, call.arguments || '{}');
  if (!parsed.ok) return reject(parsed.error);
  const args = parsed.value;
  const problem = await tool.check?.(args, ctx);
  if (problem) return reject(problem);

  let result: ToolResult;
  try {
    if (tool.sideEffect) {
      const effect = tool.sideEffect;
      result = await r.prisma.$transaction(async (tx) => {
        await tx.action.create({ data: { jobId, idempotencyKey: call.call_id, kind: tool.name, input: args as P.InputJsonValue } });
        const res = await effect(args, ctx, tx);
        await tx.action.update({ where: { idempotencyKey: call.call_id }, data: { status: 'DONE', outcome: jsonable(res.output), finishedAt: r.now() } });
        return res;
      }, { timeout: 30_000 });
      if (r.config.agents.crashAfterAction === tool.name) process.kill(process.pid, 'SIGKILL'); // test hook
    } else {
      result = await tool.read!(args, ctx);
    }
  } catch (err) {
    return reject(`The tool failed: ${(err as Error).message.slice(0, 1000)}`);
  }
  // The effect's events first: they were recorded before the output's.
  for (const eventId of result.eventIds ?? []) await r.events.emit({ type: 'job.event', jobId, eventId });
  if (result.eventIds?.length) await r.events.emit({ type: 'job.updated', jobId });
  await saveOutput(r, jobId, runId, agent.name, itemId, call.call_id, result.output, 'DONE');
  await tool.after?.(args, result, ctx);
  return result.control ? { control: result.control } : {};
}

async function rejectAfterStop(r: Resources, jobId: string, runId: string, agentName: string, itemId: string, callId: string, stop: { control: 'wait' | 'finish'; name: string }) {
  const why = stop.control === 'wait' ? `${stop.name} paused the run to wait for the user` : `${stop.name} finished the run`;
  await saveOutput(r, jobId, runId, agentName, itemId, callId, { error: `Not run: ${why}. Call it again if it is still needed.` }, 'REJECTED');
}

function jsonable(v: unknown): P.InputJsonValue {
  return JSON.parse(JSON.stringify(v ?? null)) as P.InputJsonValue;
}

function outputText(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > MAX_OUTPUT_CHARS ? `${s.slice(0, MAX_OUTPUT_CHARS)}… [cut at ${MAX_OUTPUT_CHARS} characters]` : s;
}

/**
 * The history sent to the model: every saved item in order, except notes, items of
 * incomplete responses, duplicate calls, and calls without an output (every call sent
 * back has exactly one output).
 */
export async function loadHistory(r: Resources, runId: string): Promise<Item[]> {
  const all = await r.prisma.agentItem.findMany({ where: { runId }, orderBy: { seq: 'asc' } });
  const answered = new Set(all.filter((i) => i.type === 'function_call_output').map((i) => i.callId));
  const sent = new Set<string | null>();
  const out: Item[] = [];
  for (const i of all) {
    if (i.type === 'note') continue;
    if (i.type === 'function_call') {
      if (sent.has(i.callId) || !answered.has(i.callId)) continue;
      sent.add(i.callId);
    } else if (i.type !== 'function_call_output' && i.status === 'REJECTED') continue;
    out.push(i.payload as unknown as Item);
  }
  return out;
}

type SaveSpec = { item: Item; status: 'DONE' | 'PENDING' | 'REJECTED' | 'UNCERTAIN' };

async function saveItems(r: Resources, jobId: string, runId: string, agentName: string, specs: SaveSpec[]) {
  if (specs.length === 0) return [];
  const emits: DomainEvent[] = [];
  const saved = await r.prisma.$transaction(async (tx) => {
    const last = await tx.agentItem.findFirst({ where: { runId }, orderBy: { seq: 'desc' }, select: { seq: true } });
    let seq = (last?.seq ?? -1) + 1;
    const out: (SaveSpec & { id: string })[] = [];
    for (const s of specs) {
      const row = await tx.agentItem.create({
        data: {
          runId,
          seq: seq++,
          type: s.item.type,
          callId: 'call_id' in s.item ? s.item.call_id : null,
          name: s.item.type === 'function_call' ? s.item.name : null,
          payload: jsonable(s.item),
          status: s.status,
        },
      });
      out.push({ ...s, id: row.id });
      emits.push({ type: 'job.event', jobId, eventId: await itemEvent(tx, jobId, runId, agentName, row.seq, s.item, s.status) });
    }
    return out;
  });
  for (const e of emits) await r.events.emit(e);
  return saved;
}

async function saveOutput(r: Resources, jobId: string, runId: string, agentName: string, callItemId: string, callId: string, output: unknown, status: 'DONE' | 'REJECTED' | 'UNCERTAIN') {
  const item: Item = { type: 'function_call_output', call_id: callId, output: outputText(output) };
  const emits: DomainEvent[] = [];
  await r.prisma.$transaction(async (tx) => {
    const last = await tx.agentItem.findFirst({ where: { runId }, orderBy: { seq: 'desc' }, select: { seq: true } });
    const row = await tx.agentItem.create({ data: { runId, seq: (last?.seq ?? -1) + 1, type: item.type, callId, payload: jsonable(item), status } });
    await tx.agentItem.update({ where: { id: callItemId }, data: { status: status === 'UNCERTAIN' ? 'UNCERTAIN' : status === 'REJECTED' ? 'REJECTED' : 'DONE' } });
    emits.push({ type: 'job.event', jobId, eventId: await itemEvent(tx, jobId, runId, agentName, row.seq, item, status) });
  });
  for (const e of emits) await r.events.emit(e);
}

async function saveNote(r: Resources, jobId: string, runId: string, agentName: string, text: string) {
  const emits: DomainEvent[] = [];
  await r.prisma.$transaction(async (tx) => {
    const last = await tx.agentItem.findFirst({ where: { runId }, orderBy: { seq: 'desc' }, select: { seq: true } });
    const row = await tx.agentItem.create({ data: { runId, seq: (last?.seq ?? -1) + 1, type: 'note', payload: { type: 'note', text }, status: 'DONE' } });
    emits.push({ type: 'job.event', jobId, eventId: await recordJobEvent(tx, jobId, 'agent.item', { runId, agent: agentName, seq: row.seq, type: 'note', status: 'DONE', text }) });
  });
  for (const e of emits) await r.events.emit(e);
}

async function itemEvent(tx: Tx, jobId: string, runId: string, agentName: string, seq: number, item: Item, status: string) {
  const base = { runId, agent: agentName, seq, type: item.type, status };
  const payload =
    item.type === 'function_call'
      ? { ...base, name: item.name, callId: item.call_id, arguments: item.arguments.slice(0, 4000) }
      : item.type === 'function_call_output'
        ? { ...base, callId: item.call_id, output: item.output.slice(0, 4000) }
        : item.type === 'message'
          ? { ...base, role: item.role, text: item.content.slice(0, 4000) }
          : { ...base, text: item.summary.map((s) => s.text).join('\n').slice(0, 4000) };
  return recordJobEvent(tx, jobId, 'agent.item', payload);
}

async function emitRun(r: Resources, jobId: string, runId: string, agentName: string, status: string, stopReason: string | null) {
  const eventId = await recordJobEvent(r.prisma, jobId, 'agent.run', { runId, agent: agentName, status, stopReason });
  await r.events.emit({ type: 'job.event', jobId, eventId });
}
