/**
 * The run supervisor (docs/architecture.md §7): started by the agents (agents/agentTurns.ts) when an attempt of
 * a RUN task fails, it reads the job and acts within its scope — on a real API, real
 * PostgreSQL, protocol-level test workers failing attempts with chosen error classes, the
 * builtin rules, the scripted model, and the real `openai` client against the local fake
 * Responses server.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { runAgentTurn } from '../src/agents/loop.js';
import { createOpenAIClient } from '../src/agents/models/openaiClient.js';
import { completed, createScriptedClient, fnCall, message } from '../src/agents/models/scriptedClient.js';
import type { ModelClient } from '../src/agents/models/types.js';
import { AgentTurns, type AgentTurnsOptions } from '../src/agents/agentTurns.js';
import { JobEngine } from '../src/domain/jobs/engine.js';
import { runSupervisor, SUPERVISOR } from '../src/agents/supervisor/supervisor.js';
import { acceptPlan } from '../src/domain/jobs/acceptPlan.js';
import { MAX_REPLANS, replanJob } from '../src/domain/supervision/supervisorActions.js';
import { commitTransition, transition } from '../src/domain/jobs/jobLifecycle.js';
import { PlanSchema } from '../src/domain/jobs/planSchema.js';
import { jobReport } from '../src/domain/supervision/jobReport.js';
import { runTick } from '../src/scheduler/tick.js';
import { waitFor } from './helpers/agents.js';
import { startTestApi } from './helpers/api.js';
import { startFakeOpenAI, wireFunctionCall } from './helpers/fakeOpenAI.js';
import { CPU_CAPS, createJobWithFile, createWorkerToken, ProtocolWorker } from './helpers/protocolClient.js';

// No agents from the server: each test attaches its own, with the model it drives.
const api = await startTestApi({}, { model: null });
const fake = await startFakeOpenAI();
afterAll(() => fake.close());
const r = api.server.resources;
const db = api.server.db.prisma;

const PLAN = PlanSchema.parse({
  summary: 'Run main.py on a python worker.',
  asks: [],
  steps: ['Run `python main.py`'],
  command: 'python main.py',
  hardware: { workload: 'python' },
  timeoutSec: 600,
  outputs: ['outputs'],
  acceptance: { exitCode: 0, requiredFiles: [], metrics: [] },
});

let agents: AgentTurns | null = null;
let engine: JobEngine | null = null;
const workers: ProtocolWorker[] = [];
afterEach(async () => {
  agents?.stop();
  engine?.stop();
  await agents?.idle();
  await engine?.idle();
  agents = null;
  engine = null;
  // Each test's workers leave the network and its queued work is withdrawn, so the next
  // test sees only its own.
  await db.worker.updateMany({ where: { id: { in: workers.map((w) => w.workerId) } }, data: { status: 'OFFLINE' } });
  await db.task.updateMany({ where: { status: 'QUEUED' }, data: { status: 'CANCELLED' } });
  workers.length = 0;
});

/** Until this process's agents and engine have nothing left to do. */
async function idle() {
  await agents?.idle();
  await engine?.idle();
  await agents?.idle();
}

/** A process with the agents: the job engine consulting the agents on this model, both listening (as server.ts starts them). */
function supervise(model: ModelClient, opts: AgentTurnsOptions = {}) {
  engine = new JobEngine(r);
  engine.listen(api.server.pubsub);
  agents = new AgentTurns(r, model, opts);
  agents.attach(engine);
  agents.listen(api.server.pubsub);
}

async function worker(owner: { token: string }, name: string, memoryMiB: number) {
  const w = new ProtocolWorker(api, await createWorkerToken(api, owner.token, name), name);
  await w.hello({ capabilities: { ...CPU_CAPS, memoryMiB } });
  workers.push(w);
  return w;
}

/** A job past planning: RUNNING, its plan accepted through the job engine, one RUN task queued. */
async function runningJob(owner: { token: string }, plan = PLAN) {
  const job = await createJobWithFile(api, owner.token);
  await transition(r, job.jobId, 'startPlanning', { reason: null });
  const accepted = await commitTransition(r, job.jobId, (tx, now) => acceptPlan(tx, now, { jobId: job.jobId, author: 'scripted', plan }));
  return { jobId: job.jobId, taskId: accepted.taskId! };
}

const jobOf = (jobId: string) => db.job.findUniqueOrThrow({ where: { id: jobId } });
const failedJob = (jobId: string, timeoutMs?: number) =>
  waitFor(
    'the job fails',
    async () => {
      const j = await jobOf(jobId);
      return j.status === 'FAILED' ? j : null;
    },
    timeoutMs,
  );
const taskOf = (taskId: string) => db.task.findUniqueOrThrow({ where: { id: taskId } });
const supervisorRuns = (jobId: string) => db.agentRun.findMany({ where: { jobId, agent: 'supervisor' }, orderBy: { createdAt: 'asc' } });

describe('the run supervisor with the builtin rules', () => {
  it('OOM: retries with more memory on the bigger worker, and the job succeeds; the finding is stored and get_job shows it', async () => {
    const owner = await api.signUp();
    const small = await worker(owner, 'small', 8192);
    const big = await worker(owner, 'big', 32768);
    const { jobId, taskId } = await runningJob(owner);
    supervise(createBuiltinClient());

    const [a1] = await small.claim();
    expect(a1!.task.id).toBe(taskId);
    await small.complete(a1!, { exitCode: 137, errorClass: 'OOM', errorMessage: 'Killed: the run reached the 8192 MiB memory limit' });

    const retried = await waitFor('the retry with more memory', async () => {
      const t = await taskOf(taskId);
      return t.status === 'QUEUED' && t.minMemoryMiB === 32768 ? t : null;
    });
    expect(retried.statusReason).toMatch(/Out of memory with 8192 MiB/);
    expect((await jobOf(jobId)).status).toBe('RUNNING');
    expect(await small.claim()).toEqual([]); // too small now
    const [a2] = await big.claim();
    expect(a2).toMatchObject({ number: 2, task: { id: taskId } });
    expect(a2!.task.requirements.minMemoryMiB).toBe(32768);
    await big.complete(a2!, { exitCode: 0 });
    await waitFor('the job succeeds', async () => (await jobOf(jobId)).status === 'SUCCEEDED');

    const actions = await db.action.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
    expect(actions.map((a) => [a.kind, (a.input as { kind?: string }).kind ?? null, a.status])).toEqual([
      ['remember', null, 'DONE'],
      ['take_action', 'retry', 'DONE'],
      ['remember', null, 'DONE'],
    ]);
    const report = await jobReport(r, jobId);
    expect(report.findings).toHaveLength(2);
    expect(report.findings[0]).toMatchObject({ source: 'supervisor', data: { remedy: 'retry_more_memory', errorClass: 'OOM', taskId } });
    expect(report.findings[0]!.text).toMatch(/ran out of memory on small, which has 8192 MiB/);
    // The next event (the task succeeded) closed the loop: the follow-up says the remedy worked.
    expect(report.findings[1]!.text).toBe('Follow-up: resolved — after retry_more_memory, attempt 2 of run succeeded on big.');
    expect(report.tasks[0]!.attempts.map((a) => [a.worker.name, a.status, a.errorClass])).toEqual([
      ['small', 'FAILED', 'OOM'],
      ['big', 'SUCCEEDED', null],
    ]);
    expect(await db.jobEvent.count({ where: { jobId, kind: 'finding' } })).toBe(2);
    expect((await supervisorRuns(jobId)).map((x) => x.status)).toEqual(['COMPLETED', 'COMPLETED']);
  });

  it('OOM with no bigger worker online: the job fails naming the memory seen', async () => {
    const owner = await api.signUp();
    const only = await worker(owner, 'only', 4096);
    const { jobId } = await runningJob(owner);
    supervise(createBuiltinClient());
    const [a1] = await only.claim();
    await only.complete(a1!, { exitCode: 137, errorClass: 'OOM' });
    const job = await failedJob(jobId);
    expect(job.statusReason).toMatch(/ran out of memory on only, which has 4096 MiB.*No online worker has more memory than 4096 MiB/s);
  });

  it('the same infrastructure failure twice on one worker: retried on another worker', async () => {
    const owner = await api.signUp();
    const flaky = await worker(owner, 'flaky', 8192);
    const steady = await worker(owner, 'steady', 8192);
    const { jobId, taskId } = await runningJob(owner);
    supervise(createBuiltinClient());

    const [a1] = await flaky.claim();
    await flaky.complete(a1!, { exitCode: null, errorClass: 'WORKER_ERROR', errorMessage: 'the disk filled up' });
    // Once: the scheduler's own retry stands (the supervisor looked and did nothing).
    await waitFor('the first supervisor run', async () => (await supervisorRuns(jobId)).find((x) => x.status === 'COMPLETED'));
    expect(await db.action.count({ where: { jobId } })).toBe(0);
    api.clock.advance(10_000); // past the retry backoff

    const [a2] = await flaky.claim();
    expect(a2).toMatchObject({ number: 2, task: { id: taskId } });
    await flaky.complete(a2!, { exitCode: null, errorClass: 'WORKER_ERROR', errorMessage: 'the disk filled up again' });
    const moved = await waitFor('the retry on the other worker', async () => {
      const t = await taskOf(taskId);
      return t.status === 'QUEUED' && (t.requirements as { avoidWorkers?: string[] }).avoidWorkers?.includes(flaky.workerId) ? t : null;
    });
    // Kept off the failing worker, not pinned: any other eligible worker may take it.
    expect(moved.pinnedWorkerId).toBeNull();
    expect(moved.statusReason).toMatch(
      /failed 2 times on flaky.*Retried on another worker \(steady or any other that can run it\), not on flaky/s,
    );
    expect(await flaky.claim()).toEqual([]);
    const [a3] = await steady.claim();
    expect(a3).toMatchObject({ number: 3, task: { id: taskId } });
    await steady.complete(a3!, { exitCode: 0 });
    await waitFor('the job succeeds', async () => (await jobOf(jobId)).status === 'SUCCEEDED');
    const finding = await db.finding.findFirstOrThrow({ where: { jobId } });
    expect(finding.data).toMatchObject({ remedy: 'retry_elsewhere', errorClass: 'WORKER_ERROR' });
  });

  it.each([
    ['silent', false],
    ['reporting late (its attempts end STALE)', true],
  ])('a lease lost twice on one worker, %s (the tick): retried on another worker', async (_how, late) => {
    const owner = await api.signUp();
    const vanishing = await worker(owner, 'vanishing', 8192);
    const steady = await worker(owner, 'steady too', 8192);
    const { jobId, taskId } = await runningJob(owner);
    supervise(createBuiltinClient());
    const loseLease = async (a: { attemptId: string; fencingToken: string; leaseExpiresAt: string }) => {
      const lease = a.leaseExpiresAt;
      api.clock.advance(new Date(lease).getTime() + 1000 - api.clock.now().getTime());
      await steady.heartbeat([]); // the other worker is alive (the tick would mark a silent one OFFLINE)
      // A partitioned worker that comes back before the tick: refused, recorded; the attempt ends STALE.
      if (late) expect((await vanishing.heartbeat([a])).renewed).toEqual([]);
      expect(await runTick(r, api.clock.now())).toMatchObject({ lost: 1, retried: 1 });
      api.clock.advance(60_000); // past the retry backoff
    };

    const [a1] = await vanishing.claim();
    await loseLease(a1!);
    // Once: the scheduler's own retry stands (the supervisor looked and did nothing).
    await waitFor('the first supervisor run', async () => (await supervisorRuns(jobId)).find((x) => x.status === 'COMPLETED'));
    expect(await db.action.count({ where: { jobId } })).toBe(0);
    const [a2] = await vanishing.claim();
    expect(a2).toMatchObject({ number: 2, task: { id: taskId } });
    await loseLease(a2!);
    const moved = await waitFor('the retry on the other worker', async () => {
      const t = await taskOf(taskId);
      return t.status === 'QUEUED' && (t.requirements as { avoidWorkers?: string[] }).avoidWorkers?.includes(vanishing.workerId) ? t : null;
    });
    expect(moved.statusReason).toMatch(/vanishing.*not on vanishing/s);
    expect(await vanishing.claim()).toEqual([]);
    const [a3] = await steady.claim();
    expect(a3).toMatchObject({ number: 3, task: { id: taskId } });
    const finding = await db.finding.findFirstOrThrow({ where: { jobId } });
    expect(finding.data).toMatchObject({ remedy: 'retry_elsewhere', errorClass: 'LEASE_EXPIRED' });
    const ended = await db.attempt.findMany({ where: { taskId, number: { in: [1, 2] } }, orderBy: { number: 'asc' } });
    expect(ended.map((x) => x.status)).toEqual(late ? ['STALE', 'STALE'] : ['LOST', 'LOST']);
    await steady.complete(a3!, { exitCode: 0 }); // nothing left leased for the next case's ticks
  });

  it("DEPENDENCY: the job fails with the installer's message", async () => {
    const owner = await api.signUp();
    const w = await worker(owner, 'installer', 8192);
    const { jobId } = await runningJob(owner);
    supervise(createBuiltinClient());
    const [a1] = await w.claim();
    const pip = 'ERROR: Could not find a version that satisfies the requirement tqdmx==9.9 (from versions: none)';
    await w.complete(a1!, { exitCode: 1, errorClass: 'DEPENDENCY', errorMessage: pip });
    const job = await failedJob(jobId);
    expect(job.statusReason).toContain(pip);
    expect(job.statusReason).toMatch(/^A dependency could not be installed on installer/);
    const failAction = await db.action.findFirstOrThrow({ where: { jobId, kind: 'take_action' } });
    expect(failAction.input).toMatchObject({ kind: 'stop_with_explanation' });
    // Never retried blindly.
    expect(await db.attempt.count({ where: { task: { jobId } } })).toBe(1);
  });

  it("DEPENDENCY with no message from the worker: the installer's line is found in the stored logs", async () => {
    const owner = await api.signUp();
    const w = await worker(owner, 'installer2', 8192);
    const { jobId } = await runningJob(owner);
    supervise(createBuiltinClient());
    const [a1] = await w.claim();
    await w.appendLogs(a1!, [
      { seq: 0, text: 'Collecting tqdmx==9.9' },
      { seq: 1, stream: 'stderr', text: 'ERROR: No matching distribution found for tqdmx==9.9' },
    ]);
    await w.complete(a1!, { exitCode: 1, errorClass: 'DEPENDENCY' });
    const job = await failedJob(jobId);
    expect(job.statusReason).toBe(
      'A dependency could not be installed on installer2: ERROR: No matching distribution found for tqdmx==9.9',
    );
  });

  /** A worker that installs packages in per-job environments, from `index`. */
  async function installer(owner: { token: string }, name: string, index: string) {
    const w = new ProtocolWorker(api, await createWorkerToken(api, owner.token, name), name);
    await w.hello({ capabilities: { ...CPU_CAPS, memoryMiB: 8192, install: { enabled: true, index } } });
    workers.push(w);
    return w;
  }
  const ANSWER = `mutation($i: AnswerQuestionInput!) { answerQuestion(input: $i) { __typename ... on Question { id status } ... on Error { message } } }`;
  const openQuestion = (jobId: string) =>
    waitFor('the supervisor asks', async () => {
      const [q] = await db.question.findMany({ where: { jobId, status: 'OPEN' } });
      return q && (await jobOf(jobId)).status === 'NEEDS_INPUT' ? q : null;
    });

  it('DEPENDENCY the worker could not install, another worker installs packages: the supervisor asks; "Retry on …" reassigns there and the job succeeds, the follow-up says it worked', async () => {
    const owner = await api.signUp();
    const mirror = await installer(owner, 'mirror-less', 'http://10.0.0.1/simple');
    const pypi = await installer(owner, 'with-index', 'https://pypi.org/simple');
    const { jobId, taskId } = await runningJob(owner);
    supervise(createBuiltinClient());
    const [a1] = await mirror.claim();
    const pip = 'ERROR: Could not find a version that satisfies the requirement tqdm==4.66 (from versions: none)';
    await mirror.complete(a1!, { exitCode: 1, errorClass: 'DEPENDENCY', errorMessage: pip });

    const q = await openQuestion(jobId);
    expect(q.text).toContain(`A dependency could not be installed on mirror-less: ${pip}`);
    expect(q.text).toContain('with-index: index https://pypi.org/simple');
    expect(q.choices).toEqual(['Retry on with-index', 'Stop the job']);
    // Waiting for the user is not a failure: the job is not failed meanwhile, nothing retried.
    expect((await taskOf(taskId)).status).toBe('FAILED');
    expect(await db.attempt.count({ where: { taskId } })).toBe(1);
    expect((await supervisorRuns(jobId)).map((x) => x.status)).toEqual(['WAITING']);

    const answered = await api.gql(ANSWER, { i: { questionId: q.id, answer: 'Retry on with-index' } }, owner.token);
    expect(answered.data.answerQuestion).toMatchObject({ __typename: 'Question', status: 'ANSWERED' });
    const queued = await waitFor('the reassignment', async () => {
      const t = await taskOf(taskId);
      return t.status === 'QUEUED' ? t : null;
    });
    expect(queued.pinnedWorkerId).toBe(pypi.workerId);
    expect(queued.statusReason).toBe('Retried on with-index, as the user chose.');
    expect((await jobOf(jobId)).status).toBe('RUNNING');
    expect(await mirror.claim()).toEqual([]); // placed on the chosen worker
    const [a2] = await pypi.claim();
    expect(a2).toMatchObject({ number: 2, task: { id: taskId } });
    await pypi.complete(a2!, { exitCode: 0 });
    await waitFor('the job succeeds', async () => (await jobOf(jobId)).status === 'SUCCEEDED');
    const actions = await db.action.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
    expect(actions.map((a) => [a.kind, (a.input as { kind?: string }).kind ?? null, a.status])).toEqual([
      ['remember', null, 'DONE'],
      ['take_action', 'ask_user', 'DONE'],
      ['take_action', 'reassign', 'DONE'],
      ['remember', null, 'DONE'],
    ]);
    const findings = await db.finding.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
    expect(findings.at(-1)!.text).toBe(
      'Follow-up: resolved — after retry_elsewhere_if_user_agrees, attempt 2 of run succeeded on with-index.',
    );
  });

  it('DEPENDENCY, the user answers "Stop the job": the job stops with the installer\'s message; never retried', async () => {
    const owner = await api.signUp();
    const one = await installer(owner, 'inst-a', 'http://10.0.0.1/simple');
    await installer(owner, 'inst-b', 'http://10.0.0.2/simple');
    const { jobId } = await runningJob(owner);
    supervise(createBuiltinClient());
    const [a1] = await one.claim();
    await one.complete(a1!, {
      exitCode: 1,
      errorClass: 'DEPENDENCY',
      errorMessage: 'ERROR: No matching distribution found for tqdmx==9.9',
    });
    const q = await openQuestion(jobId);
    await api.gql(ANSWER, { i: { questionId: q.id, answer: 'Stop the job' } }, owner.token);
    const job = await failedJob(jobId);
    expect(job.statusReason).toBe(
      'A dependency could not be installed on inst-a: ERROR: No matching distribution found for tqdmx==9.9 Stopped, as you chose.',
    );
    expect(await db.attempt.count({ where: { task: { jobId } } })).toBe(1);
  });

  it('an answer given while the supervisor that asked is still ending its turn: acted on once that turn ends; the failed run does not fail the job first', async () => {
    const owner = await api.signUp();
    const one = await installer(owner, 'quick-a', 'http://10.0.0.1/simple');
    await installer(owner, 'quick-b', 'http://10.0.0.2/simple');
    const { jobId } = await runningJob(owner);
    let answered = false;
    // The user answers between the question's commit and the end of the turn that asked it
    // (the window a loaded machine opens): the answer finds the run still locked.
    supervise(createBuiltinClient(), {
      afterAction: async (tool) => {
        if (tool !== 'take_action' || answered) return;
        const q = await db.question.findFirst({ where: { jobId, status: 'OPEN' } });
        if (!q) return;
        answered = true;
        await api.gql(ANSWER, { i: { questionId: q.id, answer: 'Stop the job' } }, owner.token);
        expect((await jobOf(jobId)).status).toBe('RUNNING');
      },
    });
    const [a1] = await one.claim();
    await one.complete(a1!, {
      exitCode: 1,
      errorClass: 'DEPENDENCY',
      errorMessage: 'ERROR: No matching distribution found for tqdmx==9.9',
    });
    const job = await failedJob(jobId);
    expect(answered).toBe(true);
    expect(job.statusReason).toBe(
      'A dependency could not be installed on quick-a: ERROR: No matching distribution found for tqdmx==9.9 Stopped, as you chose.',
    );
    expect(await db.attempt.count({ where: { task: { jobId } } })).toBe(1);
  });

  it('an answer given while no process listened: the reconcile resumes the waiting supervisor run with it', async () => {
    const owner = await api.signUp();
    const a = await installer(owner, 'asleep-a', 'http://10.0.0.1/simple');
    const b = await installer(owner, 'asleep-b', 'https://pypi.org/simple');
    const { jobId, taskId } = await runningJob(owner);
    supervise(createBuiltinClient());
    const [a1] = await a.claim();
    await a.complete(a1!, { exitCode: 1, errorClass: 'DEPENDENCY', errorMessage: 'ERROR: No matching distribution found for tqdm' });
    const q = await openQuestion(jobId);
    // The process that asked goes away; the answer lands with nobody to act on it.
    agents!.stop();
    engine!.stop();
    await idle();
    agents = null;
    engine = null;
    await api.gql(ANSWER, { i: { questionId: q.id, answer: 'Retry on asleep-b' } }, owner.token);
    expect((await jobOf(jobId)).status).toBe('RUNNING');
    expect((await supervisorRuns(jobId)).map((x) => x.status)).toEqual(['WAITING']);
    expect((await taskOf(taskId)).status).toBe('FAILED');
    // Another process's reconcile finds the run and resumes it with the answer.
    supervise(createBuiltinClient());
    await new Promise((res) => setTimeout(res, 5_500)); // the run has been quiet for QUIET_MS (wall clock)
    await agents!.reconcile();
    const queued = await waitFor('the reassignment', async () => {
      const t = await taskOf(taskId);
      return t.status === 'QUEUED' ? t : null;
    });
    expect(queued.pinnedWorkerId).toBe(b.workerId);
    await waitFor('the run to complete', async () => (await supervisorRuns(jobId))[0]!.status === 'COMPLETED');
    expect(await db.action.count({ where: { jobId, kind: 'take_action' } })).toBe(2); // ask_user, reassign
  });

  it(
    'a module missing at run time that no requirement provides: the supervisor replans with it, the planner says what to add and the job stops; not retried, nobody asked',
    { timeout: 120_000 },
    async () => {
      const owner = await api.signUp();
      const w = await installer(owner, 'runtime', 'https://pypi.org/simple');
      await installer(owner, 'runtime-2', 'https://pypi.org/simple');
      const { jobId } = await runningJob(owner);
      supervise(createBuiltinClient());
      const [a1] = await w.claim();
      // The worker's classification of `ModuleNotFoundError: No module named 'tqdm'` (runner.ts classifyFailure).
      await w.complete(a1!, {
        exitCode: 1,
        errorClass: 'DEPENDENCY',
        errorMessage: "missing module: tqdm (ModuleNotFoundError: No module named 'tqdm'; exit code 1)",
      });
      const job = await failedJob(jobId, 90_000); // a supervisor run, then a planner run
      expect(job.statusReason).toMatch(
        /lacks tqdm \(imported by \(a run: ModuleNotFoundError\)\)\. No requirements file lists tqdm: add it to requirements\.txt so a worker can install it\.$/,
      );
      const actions = await db.action.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
      expect(actions.filter((a) => a.kind === 'take_action').map((a) => (a.input as { kind: string }).kind)).toEqual(['replan']);
      const finding = await db.finding.findFirstOrThrow({ where: { jobId, source: 'supervisor' } });
      expect(finding).toMatchObject({
        text: 'Attempt 1 of run stopped on a missing module: tqdm (runtime).',
        data: expect.objectContaining({ remedy: 'replan', errorClass: 'DEPENDENCY' }),
      });
      expect(await db.question.count({ where: { jobId } })).toBe(0);
      expect(await db.attempt.count({ where: { task: { jobId } } })).toBe(1);
      expect(await db.plan.count({ where: { jobId } })).toBe(1);
    },
  );

  it(
    'the supervisor that replanned still holds the job when the planner starts (its turn goes on): the planner waits for the lock, then plans',
    { timeout: 60_000 },
    async () => {
      const owner = await api.signUp();
      const w = await installer(owner, 'slow-holder', 'https://pypi.org/simple');
      await installer(owner, 'slow-holder-2', 'https://pypi.org/simple');
      const { jobId } = await runningJob(owner);
      const builtin = createBuiltinClient();
      // The supervisor's turn after its replan call takes 1.5 s more: the job.replanned event
      // reaches the agents while the supervisor still holds the job's agent lock.
      const slowAfterReplan: ModelClient = {
        name: builtin.name,
        async respond(req) {
          const last = req.input.at(-1);
          if (
            last?.type === 'function_call_output' &&
            req.input.some(
              (i) =>
                i.type === 'function_call' && i.call_id === last.call_id && i.name === 'take_action' && i.arguments.includes('"replan"'),
            )
          ) {
            await new Promise((done) => setTimeout(done, 1500));
          }
          return builtin.respond(req);
        },
      };
      supervise(slowAfterReplan);
      const [a1] = await w.claim();
      await w.complete(a1!, {
        exitCode: 1,
        errorClass: 'DEPENDENCY',
        errorMessage: "missing module: tqdm (ModuleNotFoundError: No module named 'tqdm'; exit code 1)",
      });
      // No tick, no reconcile: only the event's own reaction can start the planner.
      const job = await failedJob(jobId, 20_000);
      expect(job.statusReason).toMatch(/No requirements file lists tqdm: add it to requirements\.txt so a worker can install it\.$/);
      const runs = await db.agentRun.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' }, select: { agent: true } });
      expect(runs.map((x) => x.agent)).toEqual(['supervisor', 'planner']);
    },
  );

  it('a run alive but silent for STALL_MIN minutes: the tick reports it once, the supervisor saves a finding with its last line; the run goes on', async () => {
    const owner = await api.signUp();
    const quiet = await worker(owner, 'quiet', 8192);
    const chatty = await worker(owner, 'chatty', 8192);
    const silentJob = await runningJob(owner);
    const [a] = await quiet.claim();
    expect(a!.task.id).toBe(silentJob.taskId);
    const busyJob = await runningJob(owner);
    const [b] = await chatty.claim();
    expect(b!.task.id).toBe(busyJob.taskId);
    await quiet.heartbeat([a!]);
    await chatty.heartbeat([b!]);
    await quiet.appendLogs(a!, [{ seq: 0, text: 'loading 40 GB of shards…' }]);
    await chatty.appendLogs(b!, [{ seq: 0, text: 'epoch 1' }]);
    // Both started 40 minutes ago; only the chatty one wrote since.
    const now = api.clock.now();
    const ago = new Date(now.getTime() - 40 * 60_000);
    await db.attempt.updateMany({ where: { id: { in: [a!.attemptId, b!.attemptId] } }, data: { startedAt: ago } });
    await db.logChunk.updateMany({ where: { attemptId: a!.attemptId }, data: { ts: ago } });
    supervise(createBuiltinClient());

    expect(await runTick(r, now)).toMatchObject({ ran: true, stalled: 1, lost: 0 });
    const event = await db.jobEvent.findFirstOrThrow({ where: { jobId: silentJob.jobId, kind: 'attempt.stalled' } });
    expect(event.payload).toMatchObject({ attemptId: a!.attemptId, attempt: 1, minutes: api.config.scheduler.stallMin, silentMin: 40 });
    expect(await db.jobEvent.count({ where: { jobId: busyJob.jobId, kind: 'attempt.stalled' } })).toBe(0);
    const finding = await waitFor('the finding', () => db.finding.findFirst({ where: { jobId: silentJob.jobId } }));
    expect(finding.text).toMatch(
      /^Attempt 1 of run on quiet has written no log line or metric for a while, though its worker keeps renewing the lease\. Its last line \(.*\): loading 40 GB of shards…$/,
    );
    // Reported once; nothing stopped or retried.
    expect((await runTick(r, now)).stalled).toBe(0);
    expect((await db.attempt.findUniqueOrThrow({ where: { id: a!.attemptId } })).status).toBe('RUNNING');
    expect(await db.action.count({ where: { jobId: silentJob.jobId, kind: 'take_action' } })).toBe(0);
  });

  it("the retried attempt fails while the supervisor's run is still open: that failure is the supervisor's to judge, not a generic failure of the job", async () => {
    const owner = await api.signUp();
    const w = await worker(owner, 'race', 8192);
    const { jobId, taskId } = await runningJob(owner);
    let a2: Awaited<ReturnType<ProtocolWorker['claim']>>[number] | undefined;
    supervise(
      createScriptedClient([
        completed(fnCall('take_action', { kind: 'retry', taskId, text: 'Retried once.' })),
        // Before this run ends, the retry is claimed and fails (its task.finished comes while the run is open).
        async () => {
          [a2] = await w.claim();
          await w.complete(a2!, { exitCode: 1 });
          return completed(message('Retried.'));
        },
        completed(fnCall('take_action', { kind: 'stop_with_explanation', text: 'It failed again after the retry: stopped.' })),
      ]),
    );
    const [a1] = await w.claim();
    await w.complete(a1!, { exitCode: 1 });
    const job = await failedJob(jobId);
    expect(a2?.number).toBe(2);
    expect(job.statusReason).toBe('It failed again after the retry: stopped.');
    expect((await supervisorRuns(jobId)).map((x) => x.status)).toEqual(['COMPLETED', 'COMPLETED']);
  });

  it('a remedy that did not work is not repeated: the next run records it and stops the job', async () => {
    const owner = await api.signUp();
    const small = await worker(owner, 'small2', 8192);
    const big = await worker(owner, 'big2', 16384);
    await worker(owner, 'bigger2', 65536);
    const { jobId, taskId } = await runningJob(owner);
    supervise(createBuiltinClient());
    const [a1] = await small.claim();
    await small.complete(a1!, { exitCode: 137, errorClass: 'OOM' });
    await waitFor('the retry', async () => (await taskOf(taskId)).status === 'QUEUED');
    const [a2] = await big.claim();
    await big.complete(a2!, { exitCode: 137, errorClass: 'OOM' });
    const job = await failedJob(jobId);
    expect(job.statusReason).toMatch(/failed again with OOM on big2 after the supervisor's retry_more_memory/);
    const findings = await db.finding.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
    expect(findings.map((f) => f.text)).toEqual([
      expect.stringMatching(/ran out of memory on small2/),
      expect.stringMatching(/^Follow-up: not resolved/),
    ]);
    expect(await db.attempt.count({ where: { task: { jobId } } })).toBe(2);
  });
});

describe('triggers across jobs and after the job ended', () => {
  const supervisorFinding = (jobId: string, trigger: string) =>
    waitFor(
      `the ${trigger} finding`,
      async () =>
        (await db.finding.findMany({ where: { jobId } })).find((f) => (f.data as { trigger?: string }).trigger === trigger) ?? null,
    );

  it('a flapping worker (3 attempts lost within the window, across jobs): each affected job gets a finding and its queued task is kept off that worker; another worker runs them', async () => {
    const owner = await api.signUp();
    const flappy = new ProtocolWorker(api, await createWorkerToken(api, owner.token, 'flappy'), 'flappy');
    await flappy.hello({ slots: 3, capabilities: { ...CPU_CAPS, memoryMiB: 8192 } });
    workers.push(flappy);
    const jobs = [await runningJob(owner), await runningJob(owner), await runningJob(owner)];
    const leases = await flappy.claim({ max: 3 });
    expect(leases.map((a) => a.task.id).sort()).toEqual(jobs.map((j) => j.taskId).sort());
    supervise(createBuiltinClient());

    // Earlier tests' running work is withdrawn (its leases run out too, and must not be retried here).
    await db.task.updateMany({
      where: { status: { in: ['LEASED', 'RUNNING', 'QUEUED'] }, id: { notIn: jobs.map((j) => j.taskId) } },
      data: { status: 'CANCELLED' },
    });
    // The three leases run out at once (the worker vanished); a steady worker is online.
    api.clock.advance((api.config.scheduler.leaseSec + 1) * 1000);
    const steady = new ProtocolWorker(api, await createWorkerToken(api, owner.token, 'steady'), 'steady');
    await steady.hello({ slots: 3, capabilities: { ...CPU_CAPS, memoryMiB: 8192 } });
    workers.push(steady);
    // (Other tests' leases run out too; only flappy lost three.)
    const tick = await runTick(r, api.clock.now());
    expect(tick).toMatchObject({ ran: true, flapping: 1 });
    expect(tick.lost).toBeGreaterThanOrEqual(3);

    for (const j of jobs) {
      const event = await db.jobEvent.findFirstOrThrow({ where: { jobId: j.jobId, kind: 'worker.flapping' } });
      expect(event.payload).toMatchObject({
        workerId: flappy.workerId,
        worker: 'flappy',
        lost: 3,
        windowMin: api.config.scheduler.flapWindowMin,
      });
      const finding = await supervisorFinding(j.jobId, 'worker_flapping');
      expect(finding.text).toBe(
        `Worker flappy lost 3 attempts within ${api.config.scheduler.flapWindowMin} min (its lease ran out each time), 1 of them this job's: it keeps vanishing.`,
      );
      expect((finding.data as { evidence: string[] }).evidence).toContain(`worker:${flappy.workerId}`);
      const task = await waitFor('the task kept off flappy', async () => {
        const t = await taskOf(j.taskId);
        return ((t.requirements as { avoidWorkers?: string[] }).avoidWorkers ?? []).includes(flappy.workerId) ? t : null;
      });
      expect(task.statusReason).toMatch(/^Worker flappy is flapping \(3 attempts lost in \d+ min\): run runs on another worker\.$/);
    }
    // Past the retries' backoff: the flapping worker gets none of them, the steady one all three.
    api.clock.advance(60_000);
    await flappy.heartbeat([]);
    await steady.heartbeat([]);
    expect(await flappy.claim()).toEqual([]);
    const taken = await steady.claim({ max: 3 });
    expect(taken.map((a) => a.task.id).sort()).toEqual(jobs.map((j) => j.taskId).sort());
    // Reported once per crossing: the next tick (nothing new lost) says nothing.
    expect((await runTick(r, api.clock.now())).flapping).toBe(0);
    await idle();
    for (const j of jobs) expect(await db.finding.count({ where: { jobId: j.jobId } })).toBe(1);
  });

  it('a job stopped at its spending cap: the supervisor explains what the billed cost went to and the cap finishing needs; the job stays STOPPED', async () => {
    const owner = await api.signUp();
    const w = await worker(owner, 'capped', 8192);
    const { jobId, taskId } = await runningJob(owner);
    const [a] = await w.claim();
    await w.heartbeat([a!]);
    // The cap is lowered after the lease (the claim refuses a lease projected past the cap).
    await db.job.update({
      where: { id: jobId },
      data: { spendingCapCad: '0.0005', estimate: { durationSec: 7200, lowCad: 0.004, highCad: 0.006, costCad: 0.005 } },
    });
    supervise(createBuiltinClient());
    // Half an hour of running accrues past the cap.
    const now = api.clock.now();
    await db.attempt.update({ where: { id: a!.attemptId }, data: { startedAt: new Date(now.getTime() - 30 * 60_000) } });
    expect(await runTick(r, now)).toMatchObject({ ran: true, stopped: 1 });
    expect((await jobOf(jobId)).status).toBe('STOPPED');

    const finding = await supervisorFinding(jobId, 'stopped_at_cap');
    const job = await jobOf(jobId);
    expect(finding.text).toBe(
      `Stopped at its spending cap of 0.0005 CAD with ${Number(job.costCad).toFixed(4)} CAD billed: run ${Number(job.costCad).toFixed(4)} CAD over 1 attempt (cancelled). The smoke run estimated the full run at 0.0040 CAD–0.0060 CAD.`,
    );
    expect(finding.data).toMatchObject({
      evidence: [`attempt:${a!.attemptId}`],
      hypothesis: 'The cap is below what the run was estimated to cost (0.0040 CAD–0.0060 CAD, plus 0.0000 CAD for the other steps).',
      followUp: "To finish, submit again with a cap of at least 0.0060 CAD (the estimate's high end plus the other steps).",
    });
    await idle();
    // The run looked back and ended; nothing was retried or changed, and it said it once even
    // when the event comes again (several API processes hear it).
    expect((await supervisorRuns(jobId)).map((x) => [x.status, x.stopReason])).toEqual([['COMPLETED', 'done']]);
    await api.server.pubsub.emit({ type: 'job.capped', jobId });
    await waitFor(
      'the second run',
      async () => (await supervisorRuns(jobId)).length === 2 && (await supervisorRuns(jobId))[1]!.status === 'COMPLETED',
    );
    expect(await db.finding.count({ where: { jobId } })).toBe(1);
    expect((await jobOf(jobId)).status).toBe('STOPPED');
    expect((await taskOf(taskId)).status).toBe('CANCELLED');
    expect(await db.action.count({ where: { jobId, kind: 'take_action' } })).toBe(0);
  });

  it('a look back at a job stopped at its cap that a crash cut off: the reconcile resumes it and the explanation is saved; the job stays STOPPED', async () => {
    const owner = await api.signUp();
    const w = await worker(owner, 'capped-crash', 8192);
    const { jobId } = await runningJob(owner);
    const [a] = await w.claim();
    await w.heartbeat([a!]);
    await db.job.update({ where: { id: jobId }, data: { spendingCapCad: '0.0005' } });
    const now = api.clock.now();
    await db.attempt.update({ where: { id: a!.attemptId }, data: { startedAt: new Date(now.getTime() - 30 * 60_000) } });
    // No agents listens: the stop at the cap happens, its look-back does not start here.
    expect(await runTick(r, now)).toMatchObject({ ran: true, stopped: 1 });
    // The process that started the look-back died after its first message (what runSupervisor writes first).
    const run = await db.agentRun.create({ data: { jobId, agent: 'supervisor', model: 'builtin', status: 'RUNNING' } });
    await db.agentItem.create({
      data: {
        runId: run.id,
        seq: 0,
        type: 'message',
        payload: { type: 'message', role: 'user', content: 'Trigger: {"reason":"stopped_at_cap"}' },
      },
    });
    await db.$executeRaw`UPDATE "AgentRun" SET "updatedAt" = now() - interval '1 minute' WHERE id = ${run.id}::uuid`;
    supervise(createBuiltinClient());
    await agents!.reconcile();
    await idle();
    expect(await db.agentRun.findUniqueOrThrow({ where: { id: run.id } })).toMatchObject({ status: 'COMPLETED', stopReason: 'done' });
    const finding = await supervisorFinding(jobId, 'stopped_at_cap');
    expect(finding.text).toMatch(/^Stopped at its spending cap of 0\.0005 CAD with /);
    expect((await jobOf(jobId)).status).toBe('STOPPED');
  });

  it('an output that misses the fixed criteria: the job fails, the supervisor names the missed criterion with the log lines that explain it', async () => {
    const owner = await api.signUp();
    const w = await worker(owner, 'diverges', 8192);
    const plan = PlanSchema.parse({
      ...PLAN,
      acceptance: { exitCode: 0, requiredFiles: [], metrics: [{ name: 'accuracy', op: '>=', value: 0.9 }] },
    });
    const { jobId } = await runningJob(owner, plan);
    supervise(createBuiltinClient());
    const [a] = await w.claim();
    await w.heartbeat([a!]);
    await w.appendLogs(a!, [
      { seq: 0, text: 'epoch 1 loss 2.31' },
      { seq: 1, stream: 'stderr', text: 'RuntimeWarning: loss is nan at step 120' },
      { seq: 2, text: 'accuracy 0.10' },
    ]);
    await w.complete(a!, { exitCode: 0, metrics: { accuracy: 0.1 } });
    const job = await failedJob(jobId);
    expect(job.statusReason).toMatch(/did not meet its acceptance criteria/);

    const finding = await supervisorFinding(jobId, 'output_rejected');
    expect(finding.text).toMatch(
      /^The output of run \(attempt 1 on diverges\) missed the acceptance criteria: .*accuracy.*0\.9.*\. Its final metrics: accuracy=0\.1\.$/,
    );
    const data = finding.data as { hypothesis: string; evidence: string[]; followUp: string };
    expect(data.hypothesis).toBe('The run\'s log points at the cause: "RuntimeWarning: loss is nan at step 120"');
    expect(data.evidence).toEqual(
      expect.arrayContaining([`attempt:${a!.attemptId}`, `log:${a!.attemptId}:1`, expect.stringMatching(/^event:\d+$/)]),
    );
    expect(data.followUp).toMatch(/^The criteria stay as they are/);
    await idle();
    expect((await jobOf(jobId)).status).toBe('FAILED');
    expect(await db.action.count({ where: { jobId, kind: 'take_action' } })).toBe(0);
  });
});

describe('scope, limits and the lock', () => {
  /** A RUNNING job whose task failed (no agents attached: nothing reacts). */
  async function failedTask(owner: { token: string }, name: string) {
    const w = await worker(owner, name, 8192);
    const job = await runningJob(owner);
    const [a] = await w.claim();
    expect(a!.task.id).toBe(job.taskId);
    await w.complete(a!, { exitCode: 1 });
    return job;
  }

  it('arguments out of scope are refused before dispatch: another job, a hardware class outside the plan, a retry past the budget or the cap, a reassignment against pinning, a revision of a job not being prepared', async () => {
    const owner = await api.signUp();
    const other = await failedTask(owner, 'scope-a');
    const mine = await failedTask(owner, 'scope-b');
    await db.task.update({ where: { id: other.taskId }, data: { maxAttempts: 1 } });
    const model = createScriptedClient([
      completed(
        fnCall('take_action', { kind: 'retry', taskId: other.taskId }),
        fnCall('take_action', { kind: 'retry', taskId: mine.taskId, accelVendor: 'nvidia' }),
        fnCall('list_eligible_workers', { taskId: other.taskId }),
        fnCall('remember', { observation: 'x', taskId: other.taskId }),
        fnCall('take_action', { kind: 'stop_with_explanation' }),
        fnCall('take_action', { kind: 'retry', taskId: mine.taskId, minMemoryMiB: 10_000_000 }),
        fnCall('take_action', { kind: 'retry', taskId: mine.taskId, onWorkerId: other.taskId }),
        fnCall('take_action', { kind: 'reassign', taskId: mine.taskId }),
      ),
      completed(message('Nothing I may do.')),
    ]);
    const res = await runSupervisor(r, model, mine.jobId, { reason: 'task_failed', taskId: mine.taskId });
    expect(res).toMatchObject({ stopReason: 'done', status: 'COMPLETED' });
    const outputs = (
      await db.agentItem.findMany({ where: { runId: res.runId, type: 'function_call_output' }, orderBy: { seq: 'asc' } })
    ).map((i) => [i.status, JSON.parse((i.payload as { output: string }).output).error]);
    expect(outputs).toEqual([
      ['REJECTED', `Task ${other.taskId} is not a task of this job.`],
      ['REJECTED', expect.stringMatching(/runs task run on none hardware; nvidia is outside it/)],
      ['REJECTED', `Task ${other.taskId} is not a task of this job.`],
      ['REJECTED', `Task ${other.taskId} is not a task of this job.`],
      ['REJECTED', 'stop_with_explanation needs text.'],
      ['REJECTED', 'No online worker has 10000000 MiB of memory for task run.'],
      ['REJECTED', 'retry does not take onWorkerId.'],
      ['REJECTED', 'reassign needs onWorkerId or avoidWorkerIds (a plain retry is kind retry).'],
    ]);
    expect(await db.action.count({ where: { jobId: { in: [mine.jobId, other.jobId] } } })).toBe(0);
    expect((await taskOf(other.taskId)).status).toBe('FAILED');
    expect((await taskOf(mine.taskId)).status).toBe('FAILED');

    // The attempt budget, checked on the job's own task; a question needs its choices.
    const budget = createScriptedClient([
      completed(
        fnCall('take_action', { kind: 'retry', taskId: mine.taskId }),
        fnCall('take_action', { kind: 'ask_user', text: 'Which?' }),
        fnCall('take_action', { kind: 'request_revision', text: 'x' }),
        fnCall('take_action', { kind: 'request_revision', step: 'hip', text: 'x' }),
      ),
      completed(message('ok')),
    ]);
    await db.task.update({ where: { id: mine.taskId }, data: { maxAttempts: 1 } });
    const res2 = await runSupervisor(r, budget, mine.jobId, { reason: 'task_failed', taskId: mine.taskId });
    const out2 = await db.agentItem.findMany({ where: { runId: res2.runId, type: 'function_call_output' }, orderBy: { seq: 'asc' } });
    expect(out2.map((o) => JSON.parse((o.payload as { output: string }).output).error)).toEqual([
      'Task run used its 1 attempts: the attempt budget is spent.',
      'ask_user needs choices (the answers the user can pick).',
      'request_revision needs step.',
      'The job is RUNNING: revisions are requested only while it is being prepared.',
    ]);
    expect(await db.question.count({ where: { jobId: mine.jobId } })).toBe(0);

    // A retry past the spending cap (the claim would not lease it), and a reassignment that breaks pinning.
    const third = await failedTask(owner, 'scope-c');
    await db.job.update({ where: { id: third.jobId }, data: { spendingCapCad: '0.000001' } });
    const res3 = await runSupervisor(
      r,
      createScriptedClient([completed(fnCall('take_action', { kind: 'retry', taskId: third.taskId })), completed(message('ok'))]),
      third.jobId,
      { reason: 'task_failed', taskId: third.taskId },
    );
    const out3 = await db.agentItem.findMany({ where: { runId: res3.runId, type: 'function_call_output' }, orderBy: { seq: 'asc' } });
    expect(JSON.parse((out3[0]!.payload as { output: string }).output).error).toMatch(
      /^A retry of task run would not be leased: leasing it would pass the job's spending cap of 0\.0000 CAD/,
    );
    await db.job.update({ where: { id: third.jobId }, data: { spendingCapCad: null } });
    const pinnedTo = workers.at(-1)!.workerId; // scope-c's worker
    await db.task.update({ where: { id: third.taskId }, data: { pinnedWorkerId: pinnedTo } });
    const elsewhere = workers.find((w) => w.workerId !== pinnedTo)!.workerId;
    const res4 = await runSupervisor(
      r,
      createScriptedClient([
        completed(fnCall('take_action', { kind: 'reassign', taskId: third.taskId, onWorkerId: elsewhere })),
        completed(message('ok')),
      ]),
      third.jobId,
      { reason: 'task_failed', taskId: third.taskId },
    );
    const out4 = await db.agentItem.findMany({ where: { runId: res4.runId, type: 'function_call_output' }, orderBy: { seq: 'asc' } });
    expect(JSON.parse((out4[0]!.payload as { output: string }).output).error).toBe(
      'Task run is pinned to another worker; its placement is not changed.',
    );
    expect((await taskOf(third.taskId)).status).toBe('FAILED');
  });

  it('replan: refused without evidence, with fields it does not take, and past MAX_REPLANS; a new plan keeps the fixed criteria; a replan whose planner never started (a crash) is picked up by the reconcile', async () => {
    const owner = await api.signUp();
    const { jobId, taskId } = await failedTask(owner, 'replan-scope');
    const errorsOf = async (runId: string) =>
      (await db.agentItem.findMany({ where: { runId, type: 'function_call_output' }, orderBy: { seq: 'asc' } })).map(
        (o) => JSON.parse((o.payload as { output: string }).output).error,
      );
    const res = await runSupervisor(
      r,
      createScriptedClient([
        completed(fnCall('take_action', { kind: 'replan' }), fnCall('take_action', { kind: 'replan', text: 'x', taskId })),
        completed(message('ok')),
      ]),
      jobId,
      { reason: 'task_failed', taskId },
    );
    expect(await errorsOf(res.runId)).toEqual(['replan needs text.', 'replan does not take taskId.']);
    expect((await jobOf(jobId)).status).toBe('RUNNING');

    // MAX_REPLANS replans, each followed by a plan; the plan must keep the criteria the first one fixed.
    const fixed = (await jobOf(jobId)).acceptanceCriteria;
    for (let i = 0; i < MAX_REPLANS; i++) {
      await commitTransition(r, jobId, (tx, now) => replanJob(tx, r, now, jobId, `evidence ${i}`));
      expect((await jobOf(jobId)).status).toBe('PLANNING');
      const other = { ...PLAN, acceptance: { ...PLAN.acceptance, requiredFiles: ['outputs/other.txt'] } };
      await expect(
        commitTransition(r, jobId, (tx, now) => acceptPlan(tx, now, { jobId, author: 'scripted', plan: other })),
      ).rejects.toThrow(/^The acceptance criteria were fixed when the first plan was accepted and stay as they are/);
      await commitTransition(r, jobId, (tx, now) => acceptPlan(tx, now, { jobId, author: 'scripted', plan: PLAN }));
      expect((await jobOf(jobId)).status).toBe('RUNNING');
    }
    expect((await jobOf(jobId)).acceptanceCriteria).toEqual(fixed);
    // The old plans' tasks never move the job again: superseded (CANCELLED); one queued run of the last plan.
    const tasks = await db.task.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
    expect(tasks.map((t) => t.status)).toEqual(['CANCELLED', 'CANCELLED', 'QUEUED']);
    const res2 = await runSupervisor(
      r,
      createScriptedClient([completed(fnCall('take_action', { kind: 'replan', text: 'again' })), completed(message('ok'))]),
      jobId,
      { reason: 'task_failed', taskId: tasks[2]!.id },
    );
    expect(await errorsOf(res2.runId)).toEqual([
      `The job was replanned ${MAX_REPLANS} times already (at most ${MAX_REPLANS}): stop with an explanation instead.`,
    ]);
    expect((await jobOf(jobId)).status).toBe('RUNNING');

    // The replan committed but the process died before the planner started (no job.replanned
    // event): the reconcile starts the new planner run, with the evidence in its brief.
    const crashed = await runningJob(owner);
    await commitTransition(r, crashed.jobId, (tx, now) =>
      replanJob(tx, r, now, crashed.jobId, 'missing module: crashpkg (ModuleNotFoundError)'),
    );
    agents = new AgentTurns(r, createBuiltinClient()); // not listening: only the reconcile
    const run = await waitFor(
      'the reconcile starts the planner',
      async () => {
        await agents!.reconcile();
        await idle();
        return db.agentRun.findFirst({ where: { jobId: crashed.jobId, agent: 'planner' } });
      },
      30_000,
      1000,
    );
    const brief = await db.agentItem.findFirstOrThrow({ where: { runId: run.id, type: 'message' }, orderBy: { seq: 'asc' } });
    expect(JSON.stringify(brief.payload)).toContain(
      'Replan 1: the run supervisor handed the job back after the run failed. Evidence: missing module: crashpkg (ModuleNotFoundError)',
    );
  });

  it('a supervisor run while the job is final does nothing', async () => {
    const owner = await api.signUp();
    const job = await failedTask(owner, 'final');
    await transition(r, job.jobId, 'cancel', { reason: 'the owner cancelled' });
    const model = createScriptedClient([completed(fnCall('take_action', { kind: 'retry', taskId: job.taskId }))]);
    const res = await runSupervisor(r, model, job.jobId, { reason: 'task_failed', taskId: job.taskId });
    expect(res.stopReason).toBe('job_final');
    expect(model.calls).toHaveLength(0);
    expect(await db.action.count({ where: { jobId: job.jobId } })).toBe(0);
    expect((await jobOf(job.jobId)).status).toBe('CANCELLED');
  });

  it('the follow-up of an accepted revision is recorded even when the job ended first (candidate_accepted looks back; its full run may finish before the supervisor starts)', async () => {
    const owner = await api.signUp();
    const job = await failedTask(owner, 'ended-first');
    await transition(r, job.jobId, 'cancel', { reason: 'the owner cancelled' });
    const model = createScriptedClient([
      completed(
        fnCall('remember', {
          observation: 'Follow-up: resolved — revision 1 of hip passed its checks and was accepted.',
          evidence: ['preparation:hip:1'],
          trigger: 'candidate_accepted',
        }),
      ),
      completed(message('ok')),
    ]);
    const res = await runSupervisor(r, model, job.jobId, { reason: 'candidate_accepted', step: 'hip', revision: 1 });
    expect(res.stopReason).not.toBe('job_final');
    const findings = await db.finding.findMany({ where: { jobId: job.jobId, source: 'supervisor' } });
    expect(findings.map((f) => [f.text, (f.data as { trigger?: string }).trigger])).toEqual([
      ['Follow-up: resolved — revision 1 of hip passed its checks and was accepted.', 'candidate_accepted'],
    ]);
    expect((await jobOf(job.jobId)).status).toBe('CANCELLED');
  });

  it('a side effect verifies the agent lock in its transaction: a run whose lock was taken over acts on nothing', async () => {
    const owner = await api.signUp();
    const job = await failedTask(owner, 'lock');
    // The model answers after the lease was taken over by another holder (e.g. a stalled
    // process whose lease expired): its call must not commit.
    const model = createScriptedClient([
      async () => {
        await db.job.update({
          where: { id: job.jobId },
          data: { agentLockHolder: 'someone-else', agentLockUntil: new Date(api.clock.now().getTime() + 60_000) },
        });
        return completed(fnCall('take_action', { kind: 'note', text: 'should not be written' }));
      },
    ]);
    const res = await runAgentTurn(r, { jobId: job.jobId, agent: SUPERVISOR, model, input: [message('Trigger: {}')] });
    expect(res.stopReason).toBe('locked');
    expect(await db.action.count({ where: { jobId: job.jobId } })).toBe(0);
    expect(await db.jobEvent.count({ where: { jobId: job.jobId, kind: 'finding' } })).toBe(0);
    // The call stays PENDING for the lock's holder to resolve from the Action table.
    expect(await db.agentItem.count({ where: { runId: res.runId, type: 'function_call', status: 'PENDING' } })).toBe(1);
    expect((await jobOf(job.jobId)).agentLockHolder).toBe('someone-else');
  });

  it("search_logs answers from the job's stored logs, by text and by regex, and refuses another job's attempt", async () => {
    const owner = await api.signUp();
    const w = await worker(owner, 'logs', 8192);
    const job = await runningJob(owner);
    const [a] = await w.claim();
    await w.appendLogs(a!, [
      { seq: 0, text: 'Collecting tqdmx==9.9' },
      { seq: 1, stream: 'stderr', text: 'ERROR: No matching distribution found for tqdmx==9.9' },
      { seq: 2, text: 'epoch 1 loss 0.5' },
    ]);
    await w.complete(a!, { exitCode: 1 });
    const other = await failedTask(owner, 'logs-other');
    const otherAttempt = await db.attempt.findFirstOrThrow({ where: { taskId: other.taskId } });
    const model = createScriptedClient([
      completed(
        fnCall('search_logs', { query: 'no matching distribution' }),
        fnCall('search_logs', { query: '^epoch \\d+ loss', regex: true }),
        fnCall('search_logs', { query: 'x', attemptId: otherAttempt.id }),
        fnCall('search_logs', { query: '(', regex: true }),
      ),
      completed(message('ok')),
    ]);
    const res = await runSupervisor(r, model, job.jobId, { reason: 'task_failed', taskId: job.taskId });
    const outs = (await db.agentItem.findMany({ where: { runId: res.runId, type: 'function_call_output' }, orderBy: { seq: 'asc' } })).map(
      (i) => JSON.parse((i.payload as { output: string }).output),
    );
    expect(outs[0]).toMatchObject({
      source: 'stored logs and job events (PostgreSQL); Sentry is not configured',
      sentry: { status: 'not configured' },
      matches: [
        { attemptId: a!.attemptId, attempt: 1, seq: 1, stream: 'stderr', text: 'ERROR: No matching distribution found for tqdmx==9.9' },
      ],
    });
    expect(outs[0].matches).toHaveLength(1);
    expect(outs[1].matches.map((m: { text: string }) => m.text)).toEqual(['epoch 1 loss 0.5']);
    expect(outs[2].error).toBe(`Attempt ${otherAttempt.id} is not an attempt of this job.`);
    expect(outs[3].error).toMatch(/^Not a valid regular expression/);
  });

  it('two triggers at once for one job: one supervisor run acts, the other finds the job locked', async () => {
    const owner = await api.signUp();
    const job = await failedTask(owner, 'twice');
    const slow = (text: string) =>
      createScriptedClient([{ delayMs: 500, then: completed(fnCall('take_action', { kind: 'note', text })) }, completed(message('ok'))]);
    const [one, two] = await Promise.all([
      runSupervisor(r, slow('first'), job.jobId, { reason: 'task_failed', taskId: job.taskId }),
      runSupervisor(r, slow('second'), job.jobId, { reason: 'task_failed', taskId: job.taskId }),
    ]);
    expect([one.stopReason, two.stopReason].sort()).toEqual(['done', 'locked']);
    expect(await db.action.count({ where: { jobId: job.jobId } })).toBe(1);
    expect(await db.agentRun.count({ where: { jobId: job.jobId, agent: 'supervisor' } })).toBe(1);
  });

  it('Action idempotency keys are unique per job: the same call id acts once in each job', async () => {
    const owner = await api.signUp();
    const x = await failedTask(owner, 'key-x');
    const y = await failedTask(owner, 'key-y');
    for (const job of [x, y]) {
      const model = createScriptedClient([
        completed(fnCall('take_action', { kind: 'note', text: 'looked' }, 'call_same')),
        completed(message('ok')),
      ]);
      await runSupervisor(r, model, job.jobId, { reason: 'task_failed', taskId: job.taskId });
    }
    const actions = await db.action.findMany({ where: { idempotencyKey: 'call_same' } });
    expect(actions.map((a) => a.jobId).sort()).toEqual([x.jobId, y.jobId].sort());
    expect(actions.every((a) => a.status === 'DONE')).toBe(true);
  });
});

describe('the real openai client against the fake Responses server', () => {
  it('calls get_job, then take_action stop_with_explanation', async () => {
    const owner = await api.signUp();
    const w = await worker(owner, 'openai-w', 8192);
    const job = await runningJob(owner);
    const [a] = await w.claim();
    await w.complete(a!, { exitCode: 2, errorMessage: 'usage: main.py [-h]' });
    const nulls = { taskId: null, minMemoryMiB: null, onWorkerId: null, avoidWorkerIds: null, accelVendor: null, choices: null };
    fake.enqueue({ output: [wireFunctionCall('get_job', {})] }, (body: any) => {
      // The model saw get_job's answer: the failed attempt and its worker.
      const out = body.input.find((i: any) => i.type === 'function_call_output');
      const report = JSON.parse(out.output);
      expect(report.tasks[0].attempts[0]).toMatchObject({ status: 'FAILED', errorClass: 'EXIT_NONZERO', worker: { name: 'openai-w' } });
      return {
        output: [
          wireFunctionCall('take_action', {
            kind: 'stop_with_explanation',
            text: 'main.py exits with code 2 (a usage error): the command needs its arguments.',
            ...nulls,
          }),
        ],
      };
    });
    const model = createOpenAIClient({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'gpt-test', timeoutMs: 20_000, maxRetries: 0 });
    const res = await runSupervisor(r, model, job.jobId, { reason: 'task_failed', taskId: job.taskId });
    expect(res).toMatchObject({ stopReason: 'finished', status: 'COMPLETED' });
    expect(fake.pending).toBe(0);
    const tools = fake.bodies.at(-1).tools.map((t: any) => t.name);
    expect(tools).toEqual(['get_job', 'list_eligible_workers', 'search_logs', 'take_action', 'remember']);
    const j = await jobOf(job.jobId);
    expect(j.status).toBe('FAILED');
    expect(j.statusReason).toBe('main.py exits with code 2 (a usage error): the command needs its arguments.');
  });
});
