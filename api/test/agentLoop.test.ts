/**
 * The durable tool loop's guarantees (docs/architecture.md §6 invariant 5, §7), driven directly with
 * `runAgentTurn` on a real API (no pipeline: `model: null`) and real PostgreSQL; the real
 * `openai` package talks to the local fake Responses server where the wire matters.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { acquireAgentLock, LOCK_LEASE_MS, runAgentTurn } from '../src/agents/loop.js';
import { createOpenAIClient } from '../src/agents/models/openaiClient.js';
import { completed, createScriptedClient, fnCall, message, type ScriptStep } from '../src/agents/models/scriptedClient.js';
import type { Item, ModelClient } from '../src/agents/models/types.js';
import { PLANNER } from '../src/agents/planner/planner.js';
import { transition } from '../src/domain/jobs/jobLifecycle.js';
import { createJobAt, eventsOf, insertOnlineWorker, itemsOf } from './helpers/agents.js';
import { startTestApi, type TestApi } from './helpers/api.js';
import { startFakeOpenAI, wireFunctionCall, wireMessage, wireReasoning } from './helpers/fakeOpenAI.js';

const api = await startTestApi({}, { model: null });
// Small limits, set through the environment like an operator would.
const apiT = await startTestApi({ AGENT_TURN_SEC: '2', AGENT_MAX_MODEL_CALLS: '2' }, { model: null });
const apiL = await startTestApi({ AGENT_MAX_TOOL_CALLS: '3' }, { model: null });
const fake = await startFakeOpenAI();
afterAll(() => fake.close());

const FILES = {
  'main.py': 'import sys\nif __name__ == "__main__":\n    open("outputs/result.txt", "w").write("42")\n',
  'requirements.txt': 'numpy\n',
};
const USER: Item = { type: 'message', role: 'user', content: 'Run main.py and give me outputs/result.txt' };
const PLAN = {
  summary: 'Run main.py on a python worker and keep outputs/result.txt.',
  asks: [],
  steps: ['Run `python main.py`', 'Collect outputs/'],
  command: 'python main.py',
  environment: null,
  hardware: { workload: 'python', accelVendor: null, minMemoryMiB: null, minAccelMemoryMiB: null },
  timeoutSec: 600,
  outputs: ['outputs'],
  acceptance: { exitCode: 0, requiredFiles: ['outputs/result.txt'], metrics: [], evaluate: null },
};

const users = new Map<TestApi, { token: string; userId: string }>();
async function newJob(a: TestApi = api) {
  let u = users.get(a);
  if (!u) {
    u = await a.signUp();
    users.set(a, u);
    await insertOnlineWorker(a.server.db.prisma, u.userId);
  }
  const { jobId } = await createJobAt(a.url, u.token, FILES);
  // No pipeline here: the test moves the job to PLANNING itself, through the job engine.
  await transition(a.server.resources, jobId, 'startPlanning', { reason: null });
  return jobId;
}

function openai(timeoutMs = 20_000): ModelClient {
  return createOpenAIClient({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'gpt-test', timeoutMs, maxRetries: 0 });
}

const db = (a: TestApi = api) => a.server.db.prisma;
const sideEffects = async (jobId: string, a: TestApi = api) => ({
  actions: await db(a).action.count({ where: { jobId } }),
  questions: await db(a).question.count({ where: { jobId } }),
  plans: await db(a).plan.count({ where: { jobId } }),
  tasks: await db(a).task.count({ where: { jobId } }),
});
const NONE = { actions: 0, questions: 0, plans: 0, tasks: 0 };

describe('the openai client through the loop', () => {
  it('a multi-step planning run carries reasoning items (encrypted content verbatim) and tool outputs, saves every item in order, and submits the plan', async () => {
    const jobId = await newJob();
    const rs1 = wireReasoning('List the files first.');
    const fc1 = wireFunctionCall('list_files', {});
    const rs2 = wireReasoning('Then the dependencies.');
    const fc2 = wireFunctionCall('find_dependencies', {});
    const rs3 = wireReasoning('main.py is the only entry point; plan it.');
    const fc3 = wireFunctionCall('submit_plan', PLAN);
    const before = fake.bodies.length;
    fake.enqueue({ output: [rs1, fc1] }, { output: [rs2, fc2] }, { output: [rs3, fc3] });

    const res = await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model: openai(), input: [USER] });
    expect(res).toMatchObject({ stopReason: 'finished', status: 'COMPLETED' });
    expect(fake.pending).toBe(0);

    // What went over the wire: each request carries the whole history so far.
    const bodies = fake.bodies.slice(before);
    expect(bodies).toHaveLength(3);
    for (const b of bodies) {
      expect(b).toMatchObject({ model: 'gpt-test', store: false, parallel_tool_calls: false, include: ['reasoning.encrypted_content'] });
      expect(b.tools.map((t: any) => t.name)).toEqual(PLANNER.tools.map((t) => t.name));
      expect(b.tools.every((t: any) => t.strict === true)).toBe(true);
    }
    const asSent = (rs: ReturnType<typeof wireReasoning>) => ({
      type: 'reasoning',
      id: rs.id,
      summary: rs.summary,
      encrypted_content: rs.encrypted_content,
    });
    const callSent = (fc: ReturnType<typeof wireFunctionCall>) => ({
      type: 'function_call',
      call_id: fc.call_id,
      name: fc.name,
      arguments: fc.arguments,
      id: fc.id,
    });
    expect(bodies[0].input).toEqual([{ type: 'message', role: 'user', content: USER.type === 'message' ? USER.content : '' }]);
    expect(bodies[1].input).toHaveLength(4);
    expect(bodies[1].input[1]).toEqual(asSent(rs1));
    expect(bodies[1].input[1].encrypted_content).toBe(rs1.encrypted_content);
    expect(bodies[1].input[2]).toEqual(callSent(fc1));
    expect(bodies[1].input[3]).toMatchObject({ type: 'function_call_output', call_id: fc1.call_id });
    expect(
      JSON.parse(bodies[1].input[3].output)
        .files.map((f: any) => f.path)
        .sort(),
    ).toEqual(['main.py', 'requirements.txt']);
    expect(bodies[2].input).toHaveLength(7);
    expect(bodies[2].input.slice(0, 4)).toEqual(bodies[1].input); // the history is carried verbatim
    expect(bodies[2].input[4]).toEqual(asSent(rs2));
    expect(bodies[2].input[5]).toEqual(callSent(fc2));
    expect(bodies[2].input[6]).toMatchObject({ type: 'function_call_output', call_id: fc2.call_id });
    expect(bodies[2].input[6].output).toContain('main.py');

    // Saved in order, each call answered, the reasoning kept with its encrypted content.
    const items = await itemsOf(db(), res.runId);
    expect(items.map((i) => [i.seq, i.type, i.status, i.callId])).toEqual([
      [0, 'message', 'DONE', null],
      [1, 'reasoning', 'DONE', null],
      [2, 'function_call', 'DONE', fc1.call_id],
      [3, 'function_call_output', 'DONE', fc1.call_id],
      [4, 'reasoning', 'DONE', null],
      [5, 'function_call', 'DONE', fc2.call_id],
      [6, 'function_call_output', 'DONE', fc2.call_id],
      [7, 'reasoning', 'DONE', null],
      [8, 'function_call', 'DONE', fc3.call_id],
      [9, 'function_call_output', 'DONE', fc3.call_id],
    ]);
    expect((items[7]!.payload as any).encrypted_content).toBe(rs3.encrypted_content);

    // The plan's effects: one Action keyed by the call id, the plan, the RUN task, criteria fixed.
    const actions = await db().action.findMany({ where: { jobId } });
    expect(actions.map((a) => [a.kind, a.idempotencyKey, a.status])).toEqual([['submit_plan', fc3.call_id, 'DONE']]);
    const job = await db().job.findUniqueOrThrow({ where: { id: jobId }, include: { currentPlan: true, tasks: true } });
    expect(job.status).toBe('RUNNING');
    expect(job.acceptanceCriteria).toEqual({ exitCode: 0, requiredFiles: ['outputs/result.txt'], metrics: [] });
    expect(job.currentPlan).toMatchObject({ command: 'python main.py', author: 'openai:gpt-test', version: 1 });
    expect(job.tasks.map((t) => [t.kind, t.status, t.command, t.codeVersionId])).toEqual([
      ['RUN', 'QUEUED', 'python main.py', job.frozenCodeId],
    ]);
    const output = JSON.parse((items[9]!.payload as any).output);
    expect(output).toMatchObject({ planId: job.currentPlanId, taskId: job.tasks[0]!.id });
    const run = await db().agentRun.findUniqueOrThrow({ where: { id: res.runId } });
    expect(run).toMatchObject({ status: 'COMPLETED', stopReason: 'finished', model: 'openai:gpt-test', agent: 'planner' });

    // Every item is a job event; the run's start and stop too.
    const itemEvents = await eventsOf(db(), jobId, 'agent.item');
    expect(itemEvents.map((e) => (e.payload as any).seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(itemEvents[8]!.payload as any).toMatchObject({ type: 'function_call', name: 'submit_plan', callId: fc3.call_id });
    const runEvents = (await eventsOf(db(), jobId, 'agent.run')).map((e) => e.payload as any);
    expect(runEvents.map((p) => [p.status, p.stopReason])).toEqual([
      ['RUNNING', null],
      ['COMPLETED', 'finished'],
    ]);
    const kinds = (await eventsOf(db(), jobId)).map((e) => e.kind);
    for (const k of ['plan.created', 'task.created', 'job.status']) expect(kinds).toContain(k);

    // The criteria are fixed: a second submit_plan is refused before it acts.
    const again = createScriptedClient([
      completed(fnCall('submit_plan', { ...PLAN, acceptance: { ...PLAN.acceptance, requiredFiles: [] } })),
      completed(message('ok')),
    ]);
    const res2 = await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model: again, input: [USER] });
    expect(res2.stopReason).toBe('done');
    const out2 = (await itemsOf(db(), res2.runId)).find((i) => i.type === 'function_call_output')!;
    expect(out2.status).toBe('REJECTED');
    expect((out2.payload as any).output).toMatch(/already accepted.*fixed/);
    expect(await sideEffects(jobId)).toEqual({ actions: 1, questions: 0, plans: 1, tasks: 1 });
    expect((await db().job.findUniqueOrThrow({ where: { id: jobId } })).acceptanceCriteria).toEqual(job.acceptanceCriteria);
  });

  it('submit_plan refuses a pipeline with duplicate step names, or with preparation steps, before it acts', async () => {
    const jobId = await newJob();
    const step = { name: 'prep', command: 'python prep.py', produces: ['data'], timeoutSec: null };
    const prep = {
      workload: { command: 'python main.py', timeoutSec: null },
      compare: null,
      reference: { workload: 'python', accelVendor: null },
      target: { workload: 'python', accelVendor: null },
      steps: [{ name: 'opt', kind: 'optimization', transformation: 'pytorch-device-agnostic', required: false, tolerance: null }],
      revisionBudget: null,
      frozenFiles: null,
      pinRun: null,
    };
    const model = createScriptedClient([
      completed(fnCall('submit_plan', { ...PLAN, before: [step, step] })),
      completed(fnCall('submit_plan', { ...PLAN, before: [step], preparation: prep })),
      completed(message('giving up')),
    ]);
    const res = await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model, input: [USER] });
    const outs = (await itemsOf(db(), res.runId)).filter((i) => i.type === 'function_call_output');
    expect(outs.map((o) => o.status)).toEqual(['REJECTED', 'REJECTED']);
    expect((outs[0]!.payload as any).output).toMatch(/Pipeline step names must be unique \(prep, prep\)/);
    expect((outs[1]!.payload as any).output).toMatch(/cannot have both preparation steps and a pipeline/);
    expect(await sideEffects(jobId)).toEqual({ actions: 0, questions: 0, plans: 0, tasks: 0 });
  });

  it("submit_plan refuses a service with preparation steps or a smoke run, and checks its setup steps as a pipeline's, before it acts", async () => {
    const jobId = await newJob();
    const service = { readiness: { path: '/healthz' } };
    const prep = {
      workload: { command: 'python main.py', timeoutSec: null },
      compare: null,
      reference: { workload: 'python', accelVendor: null },
      target: { workload: 'python', accelVendor: null },
      steps: [{ name: 'opt', kind: 'optimization', transformation: 'pytorch-device-agnostic', required: false, tolerance: null }],
      revisionBudget: null,
      frozenFiles: null,
      pinRun: null,
    };
    const step = { name: 'prep', command: 'python prep.py', produces: ['data'], timeoutSec: null };
    const model = createScriptedClient([
      completed(fnCall('submit_plan', { ...PLAN, service, preparation: prep })),
      completed(fnCall('submit_plan', { ...PLAN, service, smoke: { command: 'python main.py --steps 5' } })),
      completed(fnCall('submit_plan', { ...PLAN, service, before: [step, step] })),
      completed(message('giving up')),
    ]);
    const res = await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model, input: [USER] });
    const outs = (await itemsOf(db(), res.runId)).filter((i) => i.type === 'function_call_output');
    expect(outs.map((o) => o.status)).toEqual(['REJECTED', 'REJECTED', 'REJECTED']);
    expect(outs.map((o) => (o.payload as any).output)).toEqual([
      expect.stringMatching(/service plan runs the code as uploaded.*drop `preparation`\./),
      expect.stringMatching(/service plan runs the code as uploaded.*drop `smoke`\./),
      expect.stringMatching(/Pipeline step names must be unique \(prep, prep\)/),
    ]);
    expect(await sideEffects(jobId)).toEqual({ actions: 0, questions: 0, plans: 0, tasks: 0 });
  });

  it('an incomplete response dispatches nothing: its items are saved REJECTED with a note and never sent back', async () => {
    const jobId = await newJob();
    const before = fake.bodies.length;
    fake.enqueue({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [wireReasoning('Ask which script…'), wireFunctionCall('ask_user', { question: 'Which script?', choices: null })],
    });
    const res = await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model: openai(), input: [USER] });
    expect(res).toMatchObject({ stopReason: 'incomplete_response', status: 'RUNNING' });
    expect(fake.bodies.length - before).toBe(1);
    const items = await itemsOf(db(), res.runId);
    expect(items.map((i) => [i.type, i.status])).toEqual([
      ['message', 'DONE'],
      ['reasoning', 'REJECTED'],
      ['function_call', 'REJECTED'],
      ['note', 'DONE'],
    ]);
    expect((items[3]!.payload as any).text).toMatch(/incomplete \(max_output_tokens\); nothing in it was acted on/);
    expect(await sideEffects(jobId)).toEqual(NONE);
    expect((await db().job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe('PLANNING');
    expect((await eventsOf(db(), jobId, 'agent.item')).map((e) => (e.payload as any).status)).toEqual([
      'DONE',
      'REJECTED',
      'REJECTED',
      'DONE',
    ]);

    // The next turn of the run sends neither the cut reasoning nor the undispatched call.
    const next = createScriptedClient([completed(message('Let me start over.'))]);
    const res2 = await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model: next, runId: res.runId });
    expect(res2).toMatchObject({ stopReason: 'done', status: 'COMPLETED', finalText: 'Let me start over.' });
    expect(next.calls[0]!.input).toEqual([USER]);
  });

  it("an OpenAI model's tokens are the job's cost: each call (completed or incomplete) is an AgentUsage row at the configured rates, added to costCad and agentCostCad; the scripted model costs nothing", async () => {
    const jobId = await newJob();
    // Two calls: the fake's usage is 120 input and 40 output tokens each (its real wire shape).
    fake.enqueue({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [wireReasoning('…')] });
    await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model: openai(), input: [USER] });
    fake.enqueue({ output: [wireMessage('Nothing to plan yet.')] });
    const run = await db().agentRun.findFirstOrThrow({ where: { jobId } });
    await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model: openai(), runId: run.id });
    const rows = await db().agentUsage.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
    expect(rows.map((u) => [u.model, u.inputTokens, u.outputTokens, u.runId])).toEqual([
      ['openai:gpt-test', 120, 40, run.id],
      ['openai:gpt-test', 120, 40, run.id],
    ]);
    const { inputCadPerMTok, outputCadPerMTok } = api.server.resources.config.agents;
    const perCall = Number(((120 * inputCadPerMTok + 40 * outputCadPerMTok) / 1e6).toFixed(6));
    expect(perCall).toBeGreaterThan(0);
    const job = await db().job.findUniqueOrThrow({ where: { id: jobId } });
    expect(Number(job.agentCostCad)).toBeCloseTo(2 * perCall, 9);
    expect(Number(job.costCad)).toBeCloseTo(2 * perCall, 9); // no task ran: the whole cost is the agents'
    const q = await api.gql(
      `query($id: ID!) { job(id: $id) { costCad agentCostCad } }`,
      { id: Buffer.from(`Job:${jobId}`).toString('base64') },
      users.get(api)!.token,
    );
    expect(q.errors).toBeUndefined();
    expect(q.data.job.agentCostCad).toBeCloseTo(2 * perCall, 9);
    // The scripted model (and the builtin rules) bill nothing.
    await runAgentTurn(api.server.resources, {
      jobId,
      agent: PLANNER,
      model: createScriptedClient([completed(message('ok'))]),
      runId: run.id,
    });
    expect(await db().agentUsage.count({ where: { jobId } })).toBe(2);
  });

  it('malformed and schema-invalid arguments and an unknown tool are not run: each gets an error output the next request carries, and each counts', async () => {
    const jobId = await newJob();
    const bad = wireFunctionCall('ask_user', '{"question": "Which script', 'call_badjson');
    const invalid = wireFunctionCall('ask_user', { question: '', choices: 'main.py' }, 'call_invalid');
    const unknown = wireFunctionCall('delete_everything', { really: true }, 'call_unknown');
    const before = fake.bodies.length;
    fake.enqueue({ output: [bad] }, { output: [invalid] }, { output: [unknown] }, { output: [wireMessage('I cannot plan this.')] });
    const res = await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model: openai(), input: [USER] });
    expect(res).toMatchObject({ stopReason: 'done', status: 'COMPLETED', finalText: 'I cannot plan this.' });

    const bodies = fake.bodies.slice(before);
    expect(bodies).toHaveLength(4);
    const outputOf = (b: any, callId: string) =>
      b.input.find((i: any) => i.type === 'function_call_output' && i.call_id === callId)?.output as string;
    expect(outputOf(bodies[1], 'call_badjson')).toMatch(/arguments are not valid JSON/);
    expect(outputOf(bodies[2], 'call_invalid')).toMatch(/invalid arguments/);
    expect(outputOf(bodies[2], 'call_invalid')).toMatch(/question/);
    expect(outputOf(bodies[3], 'call_unknown')).toBe(
      JSON.stringify({ error: `Unknown tool "delete_everything". Available tools: ${PLANNER.tools.map((t) => t.name).join(', ')}.` }),
    );
    // The call itself is sent back (every output follows its call).
    expect(bodies[3].input.find((i: any) => i.type === 'function_call' && i.call_id === 'call_unknown')).toMatchObject({
      name: 'delete_everything',
    });

    const items = await itemsOf(db(), res.runId);
    const byCall = (id: string) => items.filter((i) => i.callId === id).map((i) => [i.type, i.status]);
    for (const id of ['call_badjson', 'call_invalid', 'call_unknown']) {
      expect(byCall(id)).toEqual([
        ['function_call', 'REJECTED'],
        ['function_call_output', 'REJECTED'],
      ]);
    }
    expect(await sideEffects(jobId)).toEqual(NONE);
    expect((await db().job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe('PLANNING');
  });

  it('rejected calls count against the tool-call limit (AGENT_MAX_TOOL_CALLS=3)', async () => {
    const jobId = await newJob(apiL);
    const model = createScriptedClient(
      Array.from({ length: 6 }, (_, i) => completed(fnCall(i % 2 ? 'no_such_tool' : 'ask_user', '{not json'))),
    );
    const res = await runAgentTurn(apiL.server.resources, { jobId, agent: PLANNER, model, input: [USER] });
    expect(res).toMatchObject({ stopReason: 'limit_tool_calls', status: 'RUNNING' });
    expect(model.calls).toHaveLength(3);
    expect(await sideEffects(jobId, apiL)).toEqual(NONE);
  });

  it('a duplicate call id runs once: one Question, one Action; the duplicate is REJECTED with a note', async () => {
    const jobId = await newJob();
    const args = { question: 'Which script should run?', choices: ['main.py', 'train.py'] };
    const first = wireFunctionCall('ask_user', args, 'call_dup');
    const second = wireFunctionCall('ask_user', args, 'call_dup'); // same call id, another item id
    fake.enqueue({ output: [first, second] });
    const res = await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model: openai(), input: [USER] });
    expect(res).toMatchObject({ stopReason: 'waiting_for_user', status: 'WAITING' });

    expect(await sideEffects(jobId)).toEqual({ actions: 1, questions: 1, plans: 0, tasks: 0 });
    const q = await db().question.findFirstOrThrow({ where: { jobId } });
    expect(q).toMatchObject({ callId: 'call_dup', agentRunId: res.runId, text: args.question, choices: args.choices, status: 'OPEN' });
    expect(await db().action.findFirstOrThrow({ where: { idempotencyKey: 'call_dup' } })).toMatchObject({
      kind: 'ask_user',
      status: 'DONE',
    });
    expect((await db().job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe('NEEDS_INPUT');
    const items = await itemsOf(db(), res.runId);
    expect(items.map((i) => [i.type, i.status])).toEqual([
      ['message', 'DONE'],
      ['function_call', 'DONE'],
      ['function_call', 'REJECTED'],
      ['note', 'DONE'],
      ['function_call_output', 'DONE'],
    ]);
    expect((items[3]!.payload as any).text).toMatch(/duplicate tool call id call_dup/);
    expect(JSON.parse((items[4]!.payload as any).output)).toMatchObject({ questionId: q.id });

    // The same id again in a later response (after the answer) is rejected too: still one Question.
    await db().question.update({ where: { id: q.id }, data: { status: 'ANSWERED', answer: 'main.py', answeredAt: new Date() } });
    // A response made only of duplicates is no answer: the loop asks the model again.
    const later = createScriptedClient([
      completed(fnCall('ask_user', args, 'call_dup')),
      completed(message('Planning continues with main.py.')),
    ]);
    const res2 = await runAgentTurn(api.server.resources, {
      jobId,
      agent: PLANNER,
      model: later,
      runId: res.runId,
      input: [{ type: 'message', role: 'user', content: 'Answer: main.py' }],
    });
    expect(later.calls).toHaveLength(2);
    expect(res2.stopReason).toBe('done');
    expect(await sideEffects(jobId)).toEqual({ actions: 1, questions: 1, plans: 0, tasks: 0 });
    const dupItems = (await itemsOf(db(), res.runId)).filter((i) => i.callId === 'call_dup');
    expect(dupItems.map((i) => [i.type, i.status])).toEqual([
      ['function_call', 'DONE'],
      ['function_call', 'REJECTED'],
      ['function_call_output', 'DONE'],
      ['function_call', 'REJECTED'],
    ]);
  });

  it('a model call past the turn limit (AGENT_TURN_SEC=2) stops the turn with model_timeout and no side effect', async () => {
    const jobId = await newJob(apiT);
    const before = fake.bodies.length;
    fake.enqueue({ delayMs: 10_000, then: { output: [wireFunctionCall('ask_user', { question: 'Too late?', choices: null })] } });
    const t0 = Date.now();
    const res = await runAgentTurn(apiT.server.resources, { jobId, agent: PLANNER, model: openai(60_000), input: [USER] });
    const took = Date.now() - t0;
    expect(res).toMatchObject({ stopReason: 'model_timeout', status: 'RUNNING' });
    // The turn limit, not the (10 s late) answer, ended it: model_timeout above; and not early.
    expect(took).toBeGreaterThanOrEqual(1_900);
    expect(fake.bodies.length - before).toBe(1);
    const items = await itemsOf(db(apiT), res.runId);
    expect(items.map((i) => i.type)).toEqual(['message', 'note']);
    expect((items[1]!.payload as any).text).toMatch(/The model call failed: .*timed out/);
    expect(await sideEffects(jobId, apiT)).toEqual(NONE);
    expect(await db(apiT).agentRun.findUniqueOrThrow({ where: { id: res.runId } })).toMatchObject({
      status: 'RUNNING',
      stopReason: 'model_timeout',
    });
  });

  it('an exception from the model stops the turn with model_error; a scripted delay past the limit is model_timeout', async () => {
    const jobId = await newJob(apiT);
    const boom = createScriptedClient([{ throw: new Error('connection reset by peer') }]);
    const res = await runAgentTurn(apiT.server.resources, { jobId, agent: PLANNER, model: boom, input: [USER] });
    expect(res).toMatchObject({ stopReason: 'model_error', status: 'RUNNING' });
    const note = (await itemsOf(db(apiT), res.runId)).find((i) => i.type === 'note')!;
    expect((note.payload as any).text).toBe('The model call failed: connection reset by peer');

    const slow = createScriptedClient([{ delayMs: 5_000, then: completed(fnCall('ask_user', { question: 'late', choices: null })) }]);
    const res2 = await runAgentTurn(apiT.server.resources, { jobId, agent: PLANNER, model: slow, runId: res.runId });
    expect(res2.stopReason).toBe('model_timeout');
    expect(await sideEffects(jobId, apiT)).toEqual(NONE);
  });
});

describe('limits', () => {
  // network_capacity: a read whose answer may change between calls, so repeating it is allowed.
  const keepListing = (n: number, perResponse = 1): ScriptStep[] =>
    Array.from({ length: n }, () => () => completed(...Array.from({ length: perResponse }, () => fnCall('network_capacity', {}))));

  it('the same read of the project twice in one run is refused (a loop), pointing at the first answer; another offset or file is read', async () => {
    const jobId = await newJob();
    const model = createScriptedClient([
      completed(fnCall('read_file', { path: 'main.py' })),
      completed(fnCall('read_file', { path: 'main.py' })),
      completed(fnCall('read_file', { path: 'main.py', offset: 5 })),
      completed(fnCall('list_files', {}), fnCall('list_files', {})),
      completed(message('done')),
    ]);
    const res = await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model, input: [USER] });
    expect(res.stopReason).toBe('done');
    const outputs = (await itemsOf(db(), res.runId)).filter((i) => i.type === 'function_call_output');
    expect(outputs.map((o) => o.status)).toEqual(['DONE', 'REJECTED', 'DONE', 'DONE', 'REJECTED']);
    expect((outputs[1]!.payload as any).output).toMatch(/Not run again: read_file with these arguments already answered \(call call_\w+/);
    expect((outputs[4]!.payload as any).output).toMatch(/Not run again: list_files/);
  });

  it('stops at 8 tool calls by default and says so', async () => {
    const jobId = await newJob();
    const model = createScriptedClient(keepListing(20));
    const res = await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model, input: [USER] });
    expect(res).toMatchObject({ stopReason: 'limit_tool_calls', status: 'RUNNING' });
    expect(model.calls).toHaveLength(8);
    const items = await itemsOf(db(), res.runId);
    expect(items.filter((i) => i.type === 'function_call_output' && i.status === 'DONE')).toHaveLength(8);
    expect(items.filter((i) => i.status === 'PENDING')).toHaveLength(0);
    expect(await db().agentRun.findUniqueOrThrow({ where: { id: res.runId } })).toMatchObject({
      status: 'RUNNING',
      stopReason: 'limit_tool_calls',
    });
    const last = (await eventsOf(db(), jobId, 'agent.run')).at(-1)!.payload as any;
    expect(last).toMatchObject({ status: 'RUNNING', stopReason: 'limit_tool_calls' });
  });

  it('AGENT_MAX_TOOL_CALLS=3: a call beyond the limit in the same response is answered "not run"', async () => {
    const jobId = await newJob(apiL);
    const model = createScriptedClient(keepListing(5, 2));
    const res = await runAgentTurn(apiL.server.resources, { jobId, agent: PLANNER, model, input: [USER] });
    expect(res.stopReason).toBe('limit_tool_calls');
    expect(model.calls).toHaveLength(2);
    const outputs = (await itemsOf(db(apiL), res.runId)).filter((i) => i.type === 'function_call_output');
    expect(outputs.map((o) => o.status)).toEqual(['DONE', 'DONE', 'DONE', 'REJECTED']);
    expect((outputs[3]!.payload as any).output).toMatch(/Not run: this turn reached its limit of 3 tool calls/);
  });

  it('AGENT_MAX_MODEL_CALLS=2: stops after two model calls and says so', async () => {
    const jobId = await newJob(apiT);
    const model = createScriptedClient(keepListing(5));
    const res = await runAgentTurn(apiT.server.resources, { jobId, agent: PLANNER, model, input: [USER] });
    expect(res).toMatchObject({ stopReason: 'limit_model_calls', status: 'RUNNING' });
    expect(model.calls).toHaveLength(2);
    expect(await db(apiT).agentRun.findUniqueOrThrow({ where: { id: res.runId } })).toMatchObject({ stopReason: 'limit_model_calls' });
  });
});

describe('one agent run per job', () => {
  it('two concurrent turns on one job: exactly one runs, the other is refused as locked', async () => {
    const jobId = await newJob();
    const slowModel = () =>
      createScriptedClient([
        { delayMs: 300, then: completed(fnCall('list_files', {})) },
        { delayMs: 300, then: completed(message('done')) },
      ]);
    const a = slowModel();
    const b = slowModel();
    const results = await Promise.all([
      runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model: a, input: [USER] }),
      runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model: b, input: [USER] }),
    ]);
    expect(results.map((r) => r.stopReason).sort()).toEqual(['done', 'locked']);
    expect(a.calls.length + b.calls.length).toBe(2); // the refused one never called its model
    const runs = await db().agentRun.findMany({ where: { jobId }, include: { items: { orderBy: { seq: 'asc' } } } });
    expect(runs).toHaveLength(1);
    expect(runs[0]!.items.map((i) => i.type)).toEqual(['message', 'function_call', 'function_call_output', 'message']);
    expect((await db().job.findUniqueOrThrow({ where: { id: jobId } })).agentLockHolder).toBeNull();

    // Five at once: still exactly one.
    const many = await Promise.all(
      Array.from({ length: 5 }, () => runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model: slowModel(), input: [USER] })),
    );
    expect(many.filter((r) => r.stopReason !== 'locked')).toHaveLength(1);
    expect(await db().agentRun.count({ where: { jobId } })).toBe(2);
  });

  it('a crashed holder blocks the job only until its lease expires', async () => {
    const jobId = await newJob();
    expect(await acquireAgentLock(api.server.resources, jobId, 'a-dead-process', LOCK_LEASE_MS)).toBe(true);
    const model = createScriptedClient([completed(message('hello'))]);
    expect((await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model, input: [USER] })).stopReason).toBe('locked');
    expect(model.calls).toHaveLength(0);
    api.clock.advance(LOCK_LEASE_MS + 1_000);
    expect((await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model, input: [USER] })).stopReason).toBe('done');
  });
});

describe('recovery of PENDING calls (no crash needed: the rows are written by hand)', () => {
  async function pendingRun(jobId: string, call: Extract<Item, { type: 'function_call' }>) {
    const run = await db().agentRun.create({ data: { jobId, agent: PLANNER.name, model: 'scripted' } });
    await db().agentItem.create({ data: { runId: run.id, seq: 0, type: 'message', payload: USER as any, status: 'DONE' } });
    await db().agentItem.create({
      data: {
        runId: run.id,
        seq: 1,
        type: 'function_call',
        callId: call.call_id,
        name: call.name,
        payload: call as any,
        status: 'PENDING',
      },
    });
    return run.id;
  }

  it('a PENDING ask_user whose Action is DONE: the outcome becomes its output, no second Question, the run waits for the answer', async () => {
    const jobId = await newJob();
    const call = fnCall('ask_user', { question: 'Which script should run?', choices: ['main.py', 'train.py'] }, 'call_h_done');
    const runId = await pendingRun(jobId, call);
    // What the effect committed before "the crash": the question, the job's status and the Action.
    const q = await db().question.create({
      data: { jobId, agentRunId: runId, callId: call.call_id, text: 'Which script should run?', choices: ['main.py', 'train.py'] },
    });
    await db().job.update({ where: { id: jobId }, data: { status: 'NEEDS_INPUT' } });
    const outcome = { questionId: q.id, status: 'asked; planning continues when the user answers' };
    await db().action.create({
      data: {
        jobId,
        idempotencyKey: call.call_id,
        kind: 'ask_user',
        input: JSON.parse(call.arguments),
        status: 'DONE',
        outcome,
        finishedAt: new Date(),
      },
    });

    const model = createScriptedClient([]);
    const res = await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model, runId });
    expect(res).toMatchObject({ runId, stopReason: 'waiting_for_user', status: 'WAITING' });
    expect(model.calls).toHaveLength(0); // nothing to ask the model until the user answers
    const items = await itemsOf(db(), runId);
    expect(items.map((i) => [i.type, i.status])).toEqual([
      ['message', 'DONE'],
      ['function_call', 'DONE'],
      ['function_call_output', 'DONE'],
    ]);
    expect(items[2]!.payload).toMatchObject({ type: 'function_call_output', call_id: call.call_id });
    expect(JSON.parse((items[2]!.payload as any).output)).toEqual(outcome);
    expect(await sideEffects(jobId)).toEqual({ actions: 1, questions: 1, plans: 0, tasks: 0 });
    expect((await eventsOf(db(), jobId, 'agent.item')).map((e) => (e.payload as any).type)).toEqual(['function_call_output']);

    // The answer resumes the run: the output precedes the answer in the history.
    await db().question.update({ where: { id: q.id }, data: { status: 'ANSWERED', answer: 'main.py', answeredAt: new Date() } });
    const next = createScriptedClient([completed(message('Running main.py.'))]);
    const answer: Item = { type: 'message', role: 'user', content: 'Answer to "Which script should run?": main.py' };
    const res2 = await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model: next, runId, input: [answer] });
    expect(res2.stopReason).toBe('done');
    expect(next.calls[0]!.input.map((i) => i.type)).toEqual(['message', 'function_call', 'function_call_output', 'message']);
    expect(next.calls[0]!.input.at(-1)).toEqual(answer);
    expect(await db().question.count({ where: { jobId } })).toBe(1);
  });

  it('a PENDING call whose Action is STARTED gets an UNCERTAIN output telling the model to observe; nothing is run again', async () => {
    const jobId = await newJob();
    const call = fnCall('ask_user', { question: 'Which one?', choices: null }, 'call_h_started');
    const runId = await pendingRun(jobId, call);
    await db().action.create({
      data: { jobId, idempotencyKey: call.call_id, kind: 'ask_user', input: JSON.parse(call.arguments), status: 'STARTED' },
    });

    const model = createScriptedClient([completed(message('I will look at the job first.'))]);
    const res = await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model, runId });
    expect(res.stopReason).toBe('done');
    const items = await itemsOf(db(), runId);
    expect(items.filter((i) => i.callId === call.call_id).map((i) => [i.type, i.status])).toEqual([
      ['function_call', 'UNCERTAIN'],
      ['function_call_output', 'UNCERTAIN'],
    ]);
    const sent = model.calls[0]!.input.find((i) => i.type === 'function_call_output');
    expect(sent).toMatchObject({ call_id: call.call_id });
    expect(JSON.parse((sent as any).output)).toMatchObject({
      uncertain: true,
      message: expect.stringMatching(/may or may not have happened.*Observe the current state/),
    });
    expect(await sideEffects(jobId)).toEqual({ actions: 1, questions: 0, plans: 0, tasks: 0 });
    expect(await db().action.findFirstOrThrow({ where: { idempotencyKey: call.call_id } })).toMatchObject({ status: 'STARTED' });
  });

  it('a PENDING read-only call with no Action is run once; a PENDING side effect with no Action is run once too', async () => {
    const jobId = await newJob();
    const call = fnCall('list_files', {}, 'call_h_read');
    const runId = await pendingRun(jobId, call);
    const model = createScriptedClient([completed(message('Two files.'))]);
    const res = await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model, runId });
    expect(res.stopReason).toBe('done');
    const outs = (await itemsOf(db(), runId)).filter((i) => i.type === 'function_call_output');
    expect(outs).toHaveLength(1);
    expect(outs[0]).toMatchObject({ callId: call.call_id, status: 'DONE' });
    expect(JSON.parse((outs[0]!.payload as any).output).total).toBe(2);
    expect(model.calls[0]!.input.map((i) => i.type)).toEqual(['message', 'function_call', 'function_call_output']);
    expect(await sideEffects(jobId)).toEqual(NONE);

    // ask_user PENDING without an Action: the crash came before its commit, so it runs now, once.
    const job2 = await newJob();
    const ask = fnCall('ask_user', { question: 'Which script?', choices: ['main.py'] }, 'call_h_noaction');
    const run2 = await pendingRun(job2, ask);
    const m2 = createScriptedClient([]);
    const res2 = await runAgentTurn(api.server.resources, { jobId: job2, agent: PLANNER, model: m2, runId: run2 });
    expect(res2.stopReason).toBe('waiting_for_user');
    expect(m2.calls).toHaveLength(0);
    expect(await sideEffects(job2)).toEqual({ actions: 1, questions: 1, plans: 0, tasks: 0 });
    // Resuming again finds nothing PENDING: still one Question.
    const m3 = createScriptedClient([completed(message('waiting'))]);
    await runAgentTurn(api.server.resources, { jobId: job2, agent: PLANNER, model: m3, runId: run2 });
    expect(await sideEffects(job2)).toEqual({ actions: 1, questions: 1, plans: 0, tasks: 0 });
  });

  it('calls after one that paused the run are answered "not run" instead of being left PENDING', async () => {
    const jobId = await newJob();
    const model = createScriptedClient([
      completed(fnCall('ask_user', { question: 'Which?', choices: null }, 'call_p1'), fnCall('list_files', {}, 'call_p2')),
    ]);
    const res = await runAgentTurn(api.server.resources, { jobId, agent: PLANNER, model, input: [USER] });
    expect(res.stopReason).toBe('waiting_for_user');
    const items = await itemsOf(db(), res.runId);
    expect(items.filter((i) => i.status === 'PENDING')).toHaveLength(0);
    const out2 = items.find((i) => i.type === 'function_call_output' && i.callId === 'call_p2')!;
    expect(out2.status).toBe('REJECTED');
    expect((out2.payload as any).output).toMatch(/Not run: ask_user paused the run/);
  });
});
