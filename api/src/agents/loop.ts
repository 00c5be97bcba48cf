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
 * Every saved item is also a `agent.item` job event, so the dashboard shows each step
 * (storage: domain/agents/agentRuns.ts). A job that reaches a final status (cancelled,
 * failed, stopped) ends its agents' turns: before every model call the loop looks, and a
 * side effect refused because the job is final ends the run instead of asking again.
 *
 * AgentRun status: RUNNING ⇄ WAITING (asked the user) → COMPLETED | FAILED.
 */
import { recordModelUsage } from '../domain/billing/agentUsage.js';
import { withSpan } from '../telemetry/sentry.js';
import { randomUUID } from 'node:crypto';
import {
  acquireAgentLock,
  AgentLockLostError,
  createRun,
  earlierSameCall,
  findAction,
  knownCallIds,
  loadRun,
  pendingCalls,
  releaseAgentLock,
  runAction,
  runItems,
  saveItems as storeItems,
  saveNote as storeNote,
  saveOutput as storeOutput,
  setRunStatus,
  type SaveSpec,
} from '../domain/agents/agentRuns.js';
import { InvalidTransitionError } from '../domain/jobs/jobLifecycle.js';
import { loadJob } from '../domain/jobs/jobQueries.js';
import { isFinalJobStatus } from '../domain/jobs/jobStatus.js';
import type { Resources } from '../domain/resources.js';
import { parseToolArgs } from './models/strictSchema.js';
import type { Item, ModelClient } from './models/types.js';
import { toolSpec, type AgentDef, type ToolContext, type ToolDef, type ToolResult } from './tool.js';

export { acquireAgentLock, releaseAgentLock };

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
  | 'job_final'
  | 'locked';

export interface TurnResult {
  runId: string;
  stopReason: StopReason;
  status: 'RUNNING' | 'WAITING' | 'COMPLETED' | 'FAILED';
  /** The model's last message text, if it ended with one (a specialist's answer). */
  finalText?: string;
}

const MAX_OUTPUT_CHARS = 16_000;

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
  /** Called after a side effect commits, before its result is saved (crash tests inject a kill here). */
  afterAction?: (toolName: string) => void | Promise<void>;
  /**
   * The run looks back at a job that has ended (the supervisor after a stop at the cap or a
   * rejected output): it goes on although the job is final. Its tools' side effects are
   * still checked against the job (nothing but findings and notes is allowed on a final job).
   */
  reviewsFinalJob?: boolean;
}

/**
 * The agent lock's lease: short, and renewed by a timer while the turn runs, so a crashed
 * holder's lock expires (and its PENDING calls get resolved) within LOCK_LEASE_MS.
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
    return await withSpan(`agent.${opts.agent.name}`, { job: opts.jobId, agent: opts.agent.name, model: opts.model.name }, async (span) => {
      const res = await turn(r, opts, holder, lockMs);
      span?.setAttributes({ run: res.runId, stop_reason: res.stopReason, status: res.status });
      return res;
    });
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
  const row = opts.runId
    ? await loadRun(r, opts.runId)
    : await createRun(r, { jobId, agent: agent.name, model: model.name, parentId: opts.parentRunId ?? null });
  const run = { id: row.id, jobId, agent: agent.name };
  const ctxFor = (callId: string): ToolContext => ({ r, model, jobId, runId: run.id, callId, agent, holder });
  await setRunStatus(r, run, 'RUNNING', null, { quiet: !!opts.runId });

  const finish = async (stopReason: StopReason, status: TurnResult['status'], finalText?: string): Promise<TurnResult> => {
    await setRunStatus(r, run, status, stopReason);
    return { runId: run.id, stopReason, status, ...(finalText !== undefined ? { finalText } : {}) };
  };
  const jobFinal = async () => isFinalJobStatus((await loadJob(r, jobId)).status);

  // 2. Calls left PENDING by a crash — resolved BEFORE the new input is appended, so a
  //    user's answer never lands between the ask_user call and its output.
  const pending = await pendingCalls(r, run.id);
  let stop: { control: 'wait' | 'finish'; recovered: boolean; name: string } | null = null;
  for (const p of pending) {
    const call = p.payload as unknown as Extract<Item, { type: 'function_call' }>;
    if (stop) {
      await rejectAfterStop(r, run, p.id, call.call_id, stop);
      continue;
    }
    const tool = agent.tools.find((t) => t.name === call.name);
    const action = await findAction(r, jobId, call.call_id);
    if (action?.status === 'DONE' || action?.status === 'FAILED') {
      await saveOutput(r, run, p.id, call.call_id, action.outcome ?? { error: 'no outcome recorded' }, 'DONE');
      // The recorded outcome carries no control: the tool says how its effect stops the run.
      const control = action.status === 'DONE' ? recoveredControl(tool, call.arguments) : undefined;
      if (control) stop = { control, recovered: true, name: call.name };
    } else if (action?.status === 'STARTED') {
      await saveOutput(
        r,
        run,
        p.id,
        call.call_id,
        {
          uncertain: true,
          message: `The ${call.name} action may or may not have happened (the system stopped while it ran). Observe the current state before trying again.`,
        },
        'UNCERTAIN',
      );
    } else {
      const res = await dispatch(r, opts, tool, call, ctxFor(call.call_id), p.id);
      if (res.lockLost) return { runId: run.id, stopReason: 'locked', status: 'RUNNING' };
      if (res.control) stop = { control: res.control, recovered: false, name: call.name };
    }
  }

  if (opts.input?.length)
    await storeItems(
      r,
      run,
      opts.input.map((item) => ({ item, status: 'DONE' as const })),
    );
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
    // Renew, and stop if the lease was lost: a turn whose lease expired and was taken over
    // must not go on calling the model and dispatching tools (two runs at once on one job).
    // Nothing is written to the run then: it belongs to the new holder.
    if (!(await acquireAgentLock(r, jobId, holder, lockMs))) return { runId: run.id, stopReason: 'locked', status: 'RUNNING' };
    if (!opts.reviewsFinalJob && (await jobFinal())) return finish('job_final', 'COMPLETED');

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
      await storeNote(r, run, `The model call failed: ${e.message.slice(0, 500)}`);
      return finish(timeout ? 'model_timeout' : 'model_error', 'RUNNING');
    }
    // The call's tokens are the job's cost, whatever came of it.
    await recordModelUsage(r, { jobId, runId: run.id, model: model.name, usage: response.usage });
    if (response.status !== 'completed') {
      await storeItems(
        r,
        run,
        response.output.map((item) => ({ item, status: 'REJECTED' as const })),
      );
      await storeNote(
        r,
        run,
        `The model's response was ${response.status}${response.reason ? ` (${response.reason})` : ''}; nothing in it was acted on.`,
      );
      return finish('incomplete_response', 'RUNNING');
    }
    // c. Save the whole output before any side effect; duplicate call ids are rejected.
    const known = await knownCallIds(r, run.id);
    const toSave: SaveSpec[] = response.output.map((item) => {
      if (item.type !== 'function_call') return { item, status: 'DONE' as const };
      if (known.has(item.call_id)) return { item, status: 'REJECTED' as const };
      known.add(item.call_id);
      return { item, status: 'PENDING' as const };
    });
    const saved = await storeItems(r, run, toSave);
    const calls = saved.filter((x) => x.item.type === 'function_call' && x.status === 'PENDING');
    for (const x of saved) {
      if (x.item.type === 'function_call' && x.status === 'REJECTED') {
        await storeNote(r, run, `Rejected a duplicate tool call id ${x.item.call_id}: it was not run again.`);
      }
    }
    // Only duplicate calls (all rejected): not an answer — ask the model again (the note
    // saved above is not in its history; the next call counts against the turn's limits).
    if (calls.length === 0 && saved.some((x) => x.item.type === 'function_call')) continue;
    if (calls.length === 0) {
      const text = [...response.output].reverse().find((i) => i.type === 'message');
      return finish('done', 'COMPLETED', text?.type === 'message' ? text.content : undefined);
    }
    // d. One call at a time. Each call gets exactly one output: calls after one that paused
    //    or finished the run are rejected (never left PENDING, never run on a stale decision).
    let stopped: { control: 'wait' | 'finish'; recovered: boolean; name: string } | null = null;
    let endedByFinalJob = false;
    for (const c of calls) {
      const call = c.item as Extract<Item, { type: 'function_call' }>;
      if (stopped) {
        await rejectAfterStop(r, run, c.id, call.call_id, stopped);
        continue;
      }
      if (toolCalls >= limits.maxToolCalls) {
        await saveOutput(
          r,
          run,
          c.id,
          call.call_id,
          { error: `Not run: this turn reached its limit of ${limits.maxToolCalls} tool calls.` },
          'REJECTED',
        );
        continue;
      }
      toolCalls++;
      const res = await dispatch(
        r,
        opts,
        agent.tools.find((t) => t.name === call.name),
        call,
        ctxFor(call.call_id),
        c.id,
      );
      // The lease expired and another run holds the job now: stop without touching the run.
      if (res.lockLost) return { runId: run.id, stopReason: 'locked', status: 'RUNNING' };
      if (res.control) stopped = { control: res.control, recovered: false, name: call.name };
      else if (res.jobFinal) {
        stopped = { control: 'finish', recovered: false, name: call.name };
        endedByFinalJob = true;
      }
    }
    if (stopped?.control === 'wait') return finish('waiting_for_user', 'WAITING');
    if (stopped?.control === 'finish') return finish(endedByFinalJob ? 'job_final' : 'finished', 'COMPLETED');
    if (toolCalls >= limits.maxToolCalls) return finish('limit_tool_calls', 'RUNNING');
  }
}

type RunRef = { id: string; jobId: string; agent: string };

/** Validates and runs one call, saving its output (and Action for side effects). */
async function dispatch(
  r: Resources,
  opts: RunOptions,
  tool: ToolDef | undefined,
  call: Extract<Item, { type: 'function_call' }>,
  ctx: ToolContext,
  itemId: string,
): Promise<{ control?: ToolResult['control']; jobFinal?: boolean; lockLost?: boolean }> {
  const run: RunRef = { id: ctx.runId, jobId: ctx.jobId, agent: ctx.agent.name };
  const reject = async (error: string, jobFinal = false) => {
    await saveOutput(r, run, itemId, call.call_id, { error }, 'REJECTED');
    return jobFinal ? { jobFinal } : {};
  };
  if (!tool) return reject(`Unknown tool "${call.name}". Available tools: ${ctx.agent.tools.map((t) => t.name).join(', ')}.`);
  // JSON, then the schema (strict-mode nulls for optional fields are dropped first).
  const parsed = parseToolArgs(tool.schema, call.arguments || '{}');
  if (!parsed.ok) return reject(parsed.error);
  const args = parsed.value;
  const problem = await tool.check?.(args, ctx);
  if (problem) return reject(problem);
  if (tool.stable) {
    const earlier = await earlierSameCall(r, ctx.runId, tool.name, args, call.call_id);
    if (earlier)
      return reject(
        `Not run again: ${tool.name} with these arguments already answered (call ${earlier}) and the project's files have not changed; use that output${tool.name === 'read_file' ? ', or read on from a later offset' : ''}.`,
      );
  }

  let result: ToolResult;
  try {
    if (tool.sideEffect) {
      const effect = tool.sideEffect;
      const prepared = tool.prepare ? await tool.prepare(args, ctx) : undefined;
      // The effect's events are published after commit, before the output is saved:
      // they were recorded first.
      result = await runAction(r, { jobId: ctx.jobId, holder: ctx.holder, callId: call.call_id, kind: tool.name, args }, (tx) =>
        effect(args, ctx, tx, prepared),
      );
      await opts.afterAction?.(tool.name);
    } else {
      result = await tool.read!(args, ctx);
    }
  } catch (err) {
    // The call stays PENDING: the run's new holder resolves it from the Action table (none).
    if (err instanceof AgentLockLostError) return { lockLost: true };
    // The job engine refused the effect because the job is final (e.g. cancelled while the
    // model was thinking): the run ends; nothing was written.
    if (err instanceof InvalidTransitionError && err.jobIsFinal) return reject(`Not done: ${err.message}`, true);
    return reject(`The tool failed: ${(err as Error).message.slice(0, 1000)}`);
  }
  await saveOutput(r, run, itemId, call.call_id, result.output, 'DONE');
  await tool.after?.(args, result, ctx);
  return result.control ? { control: result.control } : {};
}

async function rejectAfterStop(
  r: Resources,
  run: RunRef,
  itemId: string,
  callId: string,
  stop: { control: 'wait' | 'finish'; name: string },
) {
  const why = stop.control === 'wait' ? `${stop.name} paused the run to wait for the user` : `${stop.name} finished the run`;
  await saveOutput(r, run, itemId, callId, { error: `Not run: ${why}. Call it again if it is still needed.` }, 'REJECTED');
}

function outputText(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > MAX_OUTPUT_CHARS ? `${s.slice(0, MAX_OUTPUT_CHARS)}… [cut at ${MAX_OUTPUT_CHARS} characters]` : s;
}

function saveOutput(
  r: Resources,
  run: RunRef,
  callItemId: string,
  callId: string,
  output: unknown,
  status: 'DONE' | 'REJECTED' | 'UNCERTAIN',
) {
  return storeOutput(r, run, callItemId, callId, outputText(output), status);
}

/**
 * The history sent to the model: every saved item in order, except notes, items of
 * incomplete responses, duplicate calls, and calls without an output (every call sent
 * back has exactly one output).
 */
export async function loadHistory(r: Resources, runId: string): Promise<Item[]> {
  const all = await runItems(r, runId);
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

/** The control a recovered (already committed) call stops the run with; see ToolDef.recoveredControl. */
function recoveredControl(tool: ToolDef | undefined, rawArgs: string): ToolResult['control'] {
  const rc = tool?.recoveredControl;
  if (typeof rc !== 'function') return rc;
  try {
    return rc(JSON.parse(rawArgs));
  } catch {
    return undefined;
  }
}
