/**
 * A real SIGKILL between an action's commit and its saved tool result (invariant 5).
 *
 * The API runs as a child process (builtin planner: no OpenAI key). The first one is
 * started through helpers/crashingApi.mjs, which injects a kill right after ask_user's
 * Question + Action commit, before the function_call_output is saved; the second is the
 * plain `node scripts/start.mjs`.
 * A project with two entry points makes the builtin planner ask. After a restart on the
 * same database and data folder the tick's reconcile resumes the planner, which resolves
 * the PENDING call from the Action table: the question exists exactly once, the job waits
 * for the answer, and answering over HTTP resumes planning to a plan and a queued run.
 * The same for the run supervisor: killed right after its retry commits, the restarted API's
 * reconcile resumes its orphaned run; the retry happened once and runs to success.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/client.js';
import { createJobAt, gqlAt, insertOnlineWorker, itemsOf, signUpAt, waitFor } from './helpers/agents.js';
import { createTestDatabase } from './helpers/db.js';
import { freePort, repoRoot, spawnProc, type Proc } from './helpers/processes.js';
import type { TestApi } from './helpers/api.js';
import { CPU_CAPS, ProtocolWorker } from './helpers/protocolClient.js';

const databaseUrl = await createTestDatabase();
const dataDir = await mkdtemp(path.join(tmpdir(), 'chatgpu-crash-'));
const db = await openDatabase({ databaseUrl, dataDir, migrate: false, poolSize: 3 });
afterAll(async () => {
  await db.close();
  await rm(dataDir, { recursive: true, force: true });
});
const prisma = db.prisma;

// No OpenAI key or base URL may leak in from the environment: the builtin planner runs.
const { OPENAI_API_KEY: _k, OPENAI_BASE_URL: _b, ...parentEnv } = process.env;
const baseEnv = {
  ...parentEnv,
  DATABASE_URL: databaseUrl,
  HOST: '127.0.0.1',
  CHATGPU_DATA_DIR: dataDir,
  TICK_INTERVAL_SEC: '1',
  CHATGPU_SKIP_WEB_BUILD: '1',
};

async function startApi(
  crashAfter?: string,
): Promise<{ proc: Proc; url: string; exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }> }> {
  const port = await freePort();
  const entry = crashAfter
    ? [path.join(repoRoot, 'api/test/helpers/crashingApi.mjs'), crashAfter]
    : [path.join(repoRoot, 'scripts/start.mjs')];
  const proc = spawnProc(process.execPath, entry, { env: { ...baseEnv, PORT: String(port) } });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  await proc.waitFor(/ChatGPU API and dashboard/, 60_000);
  return { proc, url: `http://127.0.0.1:${port}`, exit };
}

const TWO_ENTRY_POINTS = {
  'main.py': 'if __name__ == "__main__":\n    print("main")\n',
  'train.py':
    'import os\nif __name__ == "__main__":\n    os.makedirs("outputs", exist_ok=True)\n    open("outputs/done.txt", "w").write("trained")\n',
};

describe('SIGKILL between an action and its saved result', () => {
  it(
    'after a restart the PENDING call is resolved from the Action table; the question exists once; answering resumes planning',
    { timeout: 150_000 },
    async () => {
      // 1. The first process dies right after ask_user commits.
      const first = await startApi('ask_user');
      const user = await signUpAt(first.url);
      const { id: globalJobId, jobId } = await createJobAt(first.url, user.token, TWO_ENTRY_POINTS, 'run the project');
      const died = await Promise.race([first.exit, new Promise<null>((r) => setTimeout(() => r(null), 60_000))]);
      expect(died, `the API did not crash; output:\n${first.proc.output().slice(-2000)}`).toEqual({ code: null, signal: 'SIGKILL' });

      // What the crash left: the call PENDING with no output, its Action DONE, one Question.
      const run = await prisma.agentRun.findFirstOrThrow({ where: { jobId, agent: 'planner' } });
      expect(run.status).toBe('RUNNING');
      const call = (await itemsOf(prisma, run.id)).find((i) => i.type === 'function_call' && i.name === 'ask_user')!;
      expect(call.status).toBe('PENDING');
      expect(await prisma.agentItem.count({ where: { runId: run.id, callId: call.callId, type: 'function_call_output' } })).toBe(0);
      const action = await prisma.action.findFirstOrThrow({ where: { idempotencyKey: call.callId! } });
      expect(action).toMatchObject({ jobId, kind: 'ask_user', status: 'DONE' });
      const questions = await prisma.question.findMany({ where: { jobId } });
      expect(questions).toHaveLength(1);
      expect(questions[0]).toMatchObject({ callId: call.callId, agentRunId: run.id, status: 'OPEN', choices: ['main.py', 'train.py'] });
      expect((action.outcome as { questionId: string }).questionId).toBe(questions[0]!.id);
      const crashed = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
      expect(crashed.status).toBe('NEEDS_INPUT');
      expect(crashed.agentLockHolder).not.toBeNull(); // the dead process still "holds" the job until its lease expires

      // 2. Restart without the hook: the tick's reconcile resumes the orphaned run.
      const second = await startApi();
      const resolved = await waitFor(
        'the PENDING ask_user call to be resolved',
        async () => {
          const out = await prisma.agentItem.findFirst({ where: { runId: run.id, callId: call.callId, type: 'function_call_output' } });
          return out && (await prisma.agentRun.findUniqueOrThrow({ where: { id: run.id } })).status === 'WAITING' ? out : null;
        },
        60_000,
        250,
      );
      expect(resolved.status).toBe('DONE');
      expect(JSON.parse((resolved.payload as { output: string }).output)).toEqual(action.outcome);
      expect(await prisma.agentItem.findUniqueOrThrow({ where: { id: call.id } })).toMatchObject({ status: 'DONE' });
      expect(await prisma.agentRun.findUniqueOrThrow({ where: { id: run.id } })).toMatchObject({
        status: 'WAITING',
        stopReason: 'waiting_for_user',
      });
      // The side effect happened exactly once, and the model was not asked again meanwhile.
      expect(await prisma.question.count({ where: { jobId } })).toBe(1);
      expect(await prisma.action.count({ where: { jobId } })).toBe(1);
      const after = await itemsOf(prisma, run.id);
      expect(after.at(-1)!.id).toBe(resolved.id);
      expect(after.filter((i) => i.status === 'PENDING')).toHaveLength(0);
      expect((await prisma.job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe('NEEDS_INPUT');
      const itemEvents = await prisma.jobEvent.findMany({ where: { jobId, kind: 'agent.item' } });
      expect(itemEvents.some((e) => (e.payload as any).type === 'function_call_output' && (e.payload as any).callId === call.callId)).toBe(
        true,
      );

      // 3. Answer over HTTP: planning resumes from the saved history to a plan and a queued run.
      await insertOnlineWorker(prisma, user.userId); // submit_plan needs a worker that can run python (a row is enough)
      const gql = gqlAt(second.url);
      const open = await gql(
        `query($id: ID!) { job(id: $id) { status openQuestions { id text choices } } }`,
        { id: globalJobId },
        user.token,
      );
      expect(open.data?.job?.status, JSON.stringify(open)).toBe('NEEDS_INPUT');
      expect(open.data.job.openQuestions).toHaveLength(1);
      expect(open.data.job.openQuestions[0].text).toMatch(/Which script should run/);
      const ans = await gql(
        `mutation($i: AnswerQuestionInput!) { answerQuestion(input: $i) { __typename ... on Question { status answer } ... on Error { message } } }`,
        { i: { questionId: open.data.job.openQuestions[0].id, answer: 'train.py' } },
        user.token,
      );
      expect(ans.data?.answerQuestion, JSON.stringify(ans)).toMatchObject({
        __typename: 'Question',
        status: 'ANSWERED',
        answer: 'train.py',
      });

      const planned = await waitFor(
        'the job to be planned',
        async () => {
          const j = await prisma.job.findUniqueOrThrow({ where: { id: jobId }, include: { currentPlan: true, tasks: true } });
          if (j.status === 'FAILED') throw new Error(`the job failed: ${j.statusReason}`);
          // The run's COMPLETED comes after submit_plan's commit and its saved result.
          const r = await prisma.agentRun.findUniqueOrThrow({ where: { id: run.id } });
          return j.status === 'RUNNING' && j.tasks.length && r.status === 'COMPLETED' ? j : null;
        },
        60_000,
        250,
      );
      expect(planned.currentPlan?.command).toBe('python train.py');
      expect(planned.tasks.map((t) => t.kind)).toEqual(['RUN']);
      // Still exactly one question; one action per side effect; the same run went on.
      expect(await prisma.question.count({ where: { jobId } })).toBe(1);
      expect((await prisma.action.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } })).map((a) => [a.kind, a.status])).toEqual([
        ['ask_user', 'DONE'],
        ['submit_plan', 'DONE'],
      ]);
      expect(await prisma.agentRun.count({ where: { jobId, agent: 'planner' } })).toBe(1);
      const final = await itemsOf(prisma, run.id);
      const iOut = final.findIndex((i) => i.id === resolved.id);
      const iAnswer = final.findIndex((i) => i.type === 'message' && JSON.stringify(i.payload).includes('train.py'));
      expect(iAnswer).toBeGreaterThan(iOut); // the answer follows the recovered output in the history
      expect(final.filter((i) => i.status === 'PENDING')).toHaveLength(0);
      expect(await prisma.agentRun.findUniqueOrThrow({ where: { id: run.id } })).toMatchObject({
        status: 'COMPLETED',
        stopReason: 'finished',
      });

      await second.proc.stop();
    },
  );

  it(
    'the run supervisor killed right after its retry commits: the task is queued once, the restarted API resolves the call from the Action table, the retry runs and the job succeeds',
    { timeout: 150_000 },
    async () => {
      // The run the first test left queued is withdrawn: these workers must claim this job's.
      await prisma.task.updateMany({ where: { status: 'QUEUED' }, data: { status: 'CANCELLED' } });
      const first = await startApi('take_action');
      const user = await signUpAt(first.url);
      // Two workers speaking the protocol over HTTP: one too small for the run, one big enough.
      const at = (url: string) =>
        ({ gql: (q: string, v?: Record<string, unknown>, t?: string) => gqlAt(url)(q, v ?? {}, t ?? '') }) as unknown as TestApi;
      const workerAt = async (url: string, name: string, memoryMiB: number) => {
        const r = await gqlAt(url)(
          `mutation($n: String!) { createWorkerToken(input: {name: $n}) { ... on CreatedWorkerToken { token } } }`,
          { n: name },
          user.token,
        );
        const w = new ProtocolWorker(at(url), r.data.createWorkerToken.token, name);
        await w.hello({ capabilities: { ...CPU_CAPS, memoryMiB } });
        return w;
      };
      const small = await workerAt(first.url, 'crash-small', 8192);
      const big = await workerAt(first.url, 'crash-big', 32768);
      const { jobId } = await createJobAt(first.url, user.token, { 'main.py': 'print("big run")\n' }, 'run main.py');
      const [a1] = await waitFor(
        'the run to be claimable',
        async () => {
          const got = await small.claim();
          return got.length ? got : null;
        },
        60_000,
        250,
      );
      await small.complete(a1!, { exitCode: 137, errorClass: 'OOM', errorMessage: 'Killed: the run reached the 8192 MiB memory limit' });
      const died = await Promise.race([first.exit, new Promise<null>((r) => setTimeout(() => r(null), 60_000))]);
      expect(died, `the API did not crash; output:\n${first.proc.output().slice(-2000)}`).toEqual({ code: null, signal: 'SIGKILL' });

      // What the crash left: the retry committed (task queued with more memory, its Action
      // DONE), the call PENDING with no output, the supervisor's run RUNNING.
      const run = await prisma.agentRun.findFirstOrThrow({ where: { jobId, agent: 'supervisor' } });
      expect(run.status).toBe('RUNNING');
      const call = (await itemsOf(prisma, run.id)).find((i) => i.type === 'function_call' && i.name === 'take_action')!;
      expect(call.status).toBe('PENDING');
      const action = await prisma.action.findFirstOrThrow({ where: { jobId, idempotencyKey: call.callId! } });
      expect(action).toMatchObject({ kind: 'take_action', status: 'DONE', input: { kind: 'retry', minMemoryMiB: 32768 } });
      const task = await prisma.task.findFirstOrThrow({ where: { jobId, kind: 'RUN' } });
      expect(task).toMatchObject({ status: 'QUEUED', minMemoryMiB: 32768, attemptCount: 1 });

      // The restarted API's reconcile resumes the run: the call resolves from the Action table.
      const second = await startApi();
      try {
        await waitFor(
          'the orphaned supervisor run to finish',
          async () => (await prisma.agentRun.findUniqueOrThrow({ where: { id: run.id } })).status === 'COMPLETED',
          60_000,
          250,
        );
        const out = await prisma.agentItem.findFirstOrThrow({
          where: { runId: run.id, callId: call.callId, type: 'function_call_output' },
        });
        expect(JSON.parse((out.payload as { output: string }).output)).toEqual(action.outcome);
        // The effect happened once: one retry action, the task queued once, no second run of the supervisor's decision.
        expect(await prisma.action.count({ where: { jobId, kind: 'take_action' } })).toBe(1);
        expect(
          await prisma.jobEvent.count({ where: { jobId, kind: 'task.status', payload: { path: ['by'], equals: 'supervisor' } } }),
        ).toBe(1);
        const bigHere = new ProtocolWorker(at(second.url), big.token, 'crash-big');
        bigHere.workerId = big.workerId;
        const [a2] = await waitFor(
          'the retry to be claimable on the big worker',
          async () => {
            const got = await bigHere.claim();
            return got.length ? got : null;
          },
          30_000,
          250,
        );
        expect(a2).toMatchObject({ number: 2, task: { id: task.id } });
        await bigHere.complete(a2!, { exitCode: 0 });
        await waitFor(
          'the job to succeed',
          async () => (await prisma.job.findUniqueOrThrow({ where: { id: jobId } })).status === 'SUCCEEDED',
          60_000,
          250,
        );
        expect(await prisma.attempt.count({ where: { taskId: task.id } })).toBe(2);
      } finally {
        await second.proc.stop();
      }
    },
  );
});
