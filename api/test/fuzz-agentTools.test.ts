/**
 * The agents' tools, fuzzed through the real loop (runAgentTurn with a scripted model): every
 * tool of the planner and the supervisor is called with arguments that are malformed JSON,
 * the wrong JSON types, extra fields, values generated from the tool's own JSON Schema (what
 * the model is shown) with hostile strings and numbers, and out-of-scope values (another
 * job's task and attempt, another user's worker, paths outside the project).
 *
 * The turn never throws; the call is run (DONE) or refused (REJECTED with an error the model
 * reads), never a tool crash ("The tool failed: …" from an unexpected error); and a refused
 * call wrote nothing but the run's own items and their agent.* job events (the database
 * snapshot is otherwise unchanged).
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runAgentTurn } from '../src/agents/loop.js';
import { completed, createScriptedClient, fnCall, message } from '../src/agents/models/scriptedClient.js';
import { PLANNER } from '../src/agents/planner/planner.js';
import { SUPERVISOR } from '../src/agents/supervisor/supervisor.js';
import { toolSpec, type AgentDef } from '../src/agents/tool.js';
import { transition } from '../src/domain/jobs/jobLifecycle.js';
import { createJobAt, insertOnlineWorker } from './helpers/agents.js';
import { startTestApi } from './helpers/api.js';
import { fuzzParams, fuzzTimeout, hostileInt, hostileJson, hostilePath, hostileString, snapshotter } from './helpers/fuzz.js';
import { addTask, createJobWithFile } from './helpers/protocolClient.js';

const api = await startTestApi({}, { model: null });
const r = api.server.resources;
const prisma = api.server.db.prisma;
const user = await api.signUp();
const other = await api.signUp();
const myWorker = await insertOnlineWorker(prisma, user.userId);
const theirWorker = await insertOnlineWorker(prisma, other.userId);
// Out of scope: another user's job with a task.
const theirJob = await createJobWithFile(api, other.token);
const theirTask = await addTask(api, theirJob);
const snap = await snapshotter(api.databaseUrl, [path.join(api.dataDir, 'blobs')], { ignoreColumns: ['updatedAt', 'agentLockHolder', 'agentLockUntil'] });

const FILES = { 'main.py': 'import numpy\nprint(1)\n', 'README.md': 'run main.py\n' };

/** A job for one call: the planner's in PLANNING; the supervisor's with a task of its own. */
async function jobFor(agent: AgentDef) {
  const { jobId } = await createJobAt(api.url, user.token, FILES);
  await transition(r, jobId, 'startPlanning', { reason: null });
  let taskId: string | null = null;
  if (agent === SUPERVISOR) {
    const cv = await prisma.codeVersion.findFirstOrThrow({ where: { jobId } });
    taskId = (await addTask(api, { jobId, codeVersionId: cv.id })).id;
  }
  return { jobId, taskId };
}

// ---------------------------------------------------------------- arguments from the JSON Schema

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; items?: Schema; enum?: unknown[]; anyOf?: Schema[]; minimum?: number; maximum?: number };

/** Values of a field by name: real ids of this job and out-of-scope ones. */
function realFor(name: string, own: { taskId: string | null }): unknown[] {
  if (/taskId$/i.test(name)) return [own.taskId, theirTask.id, randomUUID()].filter(Boolean);
  if (/workerId$/i.test(name)) return [myWorker.id, theirWorker.id, randomUUID()];
  if (/attemptId$/i.test(name)) return [randomUUID()];
  if (name === 'path' || name === 'files') return ['main.py', '../../etc/passwd', '/etc/passwd', 'README.md', 'nope.py'];
  return [];
}

function fromSchema(s: Schema, name: string, own: { taskId: string | null }, depth = 0): fc.Arbitrary<unknown> {
  if (s.anyOf) return fc.oneof(...s.anyOf.map((x) => fromSchema(x, name, own, depth)));
  if (s.enum) return fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...s.enum) }, { weight: 1, arbitrary: hostileString({ maxLength: 10 }) });
  const types = Array.isArray(s.type) ? s.type : [s.type ?? 'string'];
  const real = realFor(name, own);
  const arbs = types.map((t): fc.Arbitrary<unknown> => {
    switch (t) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.oneof(fc.integer({ min: s.minimum ?? -5, max: Math.min(s.maximum ?? 100, 1e6) }), hostileInt());
      case 'number':
        return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), hostileInt());
      case 'array':
        return fc.array(fromSchema(s.items ?? {}, name, own, depth + 1), { maxLength: depth > 2 ? 1 : 4 });
      case 'object': {
        const rec: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [k, v] of Object.entries(s.properties ?? {})) rec[k] = fromSchema(v, k, own, depth + 1);
        return fc.record(rec);
      }
      default:
        return name === 'path' ? fc.oneof(hostilePath(), hostileString()) : hostileString();
    }
  });
  return real.length ? fc.oneof({ weight: 2, arbitrary: fc.oneof(...arbs) }, { weight: 1, arbitrary: fc.constantFrom(...real) }) : fc.oneof(...arbs);
}

/** The `arguments` string a model might send for this tool. */
function argumentsArb(schema: Schema, own: { taskId: string | null }): fc.Arbitrary<string> {
  const valid = fromSchema(schema, '', own) as fc.Arbitrary<Record<string, unknown>>;
  return fc.oneof(
    { weight: 6, arbitrary: valid.map((v) => JSON.stringify(v)) },
    // Extra fields (the strict schema forbids them), some shaped like prototype pollution.
    { weight: 1, arbitrary: fc.tuple(valid, fc.constantFrom('extra', '__proto__', 'constructor'), hostileJson()).map(([v, k, x]) => JSON.stringify(v).replace(/^\{/, `{${JSON.stringify(k)}:${JSON.stringify(x) ?? 'null'}${Object.keys(v).length ? ',' : ''}`)) },
    // The wrong JSON altogether.
    { weight: 1, arbitrary: hostileJson().map((v) => JSON.stringify(v) ?? 'null') },
    // Not JSON: cut, doubled, prose, empty.
    { weight: 1, arbitrary: fc.tuple(valid, fc.double({ min: 0, max: 1, noNaN: true })).map(([v, f]) => { const t = JSON.stringify(v); return t.slice(0, Math.floor(t.length * f)); }) },
    { weight: 1, arbitrary: fc.constantFrom('', '{', '}{', 'null', '[]', '{"a":1}{"b":2}', 'Sure! Here are the arguments:', '{"question": "x\u0000"}') },
  );
}

// ---------------------------------------------------------------- the property

async function callTool(agent: AgentDef, tool: string, args: string, job: { jobId: string }): Promise<string[]> {
  const before = await snap.take();
  const lastEvent = (await prisma.jobEvent.findFirst({ orderBy: { id: 'desc' }, select: { id: true } }))?.id ?? 0n;
  const model = createScriptedClient([completed(fnCall(tool, args)), completed(message('done'))]);
  const problems: string[] = [];
  let res;
  try {
    res = await runAgentTurn(r, { jobId: job.jobId, agent, model, input: [{ type: 'message', role: 'user', content: 'go' }] });
  } catch (err) {
    return [`the turn threw: ${(err as Error).stack?.slice(0, 600)}`];
  }
  const items = await prisma.agentItem.findMany({ where: { runId: res.runId }, orderBy: { seq: 'asc' } });
  const call = items.find((i) => i.type === 'function_call');
  const out = items.find((i) => i.type === 'function_call_output');
  const output = JSON.stringify(out?.payload ?? null);
  if (!call || !out) problems.push(`no call/output saved (stop: ${res.stopReason})`);
  else if (/The tool failed/.test(output)) problems.push(`tool crashed: ${output.slice(0, 400)}`);
  else if (out.status === 'REJECTED') {
    // The run's own items are saved and announced (agent.* job events); nothing else.
    const changed = snap.diff(before, await snap.take(), ['AgentRun', 'AgentItem', 'JobEvent']);
    const events = await prisma.jobEvent.findMany({ where: { id: { gt: lastEvent } }, select: { kind: true } });
    for (const e of events) if (!e.kind.startsWith('agent.')) changed.push(`job event ${e.kind}`);
    if (changed.length) problems.push(`refused (${output.slice(0, 200)}) but wrote: ${changed.join('; ')}`);
  }
  return problems;
}

describe('fuzz: agent tools', () => {
  for (const agent of [PLANNER, SUPERVISOR]) {
    for (const tool of agent.tools) {
      it(`${agent.name}.${tool.name}: run or refused with a typed error; a refusal writes nothing`, async () => {
        const schema = toolSpec(tool).parameters as Schema;
        const own = { taskId: randomUUID() as string | null };
        await fc.assert(
          fc.asyncProperty(argumentsArb(schema, own), async (args) => {
            const job = await jobFor(agent);
            own.taskId = job.taskId;
            const problems = await callTool(agent, tool.name, args.replaceAll(/"__OWN_TASK__"/g, JSON.stringify(job.taskId)), job);
            if (problems.length) throw new Error(`${tool.name}(${args.slice(0, 600)}):\n  ${problems.join('\n  ')}`);
          }),
          fuzzParams(3),
        );
      }, fuzzTimeout());
    }
  }
  it('covers every tool of the planner and the supervisor', () => {
    expect(PLANNER.tools.length + SUPERVISOR.tools.length).toBeGreaterThan(10);
  });
});
