/**
 * Telemetry, end to end through a local Sentry (ingest and web API on 127.0.0.1, speaking
 * Sentry's wire formats, so the real @sentry/node clients of the API and of a real worker are
 * exercised): the worker sends a `task.execute` transaction and one structured log per step
 * of the attempt, the API one per step it sees (claim, complete), all carrying the job, task,
 * worker and attempt ids; the supervisor's search_logs reads them back from Sentry's API and
 * says so, and when that API is down it says Sentry is unreachable and answers from the
 * stored logs. Without a DSN nothing is sent (the other suites run that way).
 */
import { describe, expect, it } from 'vitest';
import { completed, createScriptedClient, fnCall, message } from '../src/agents/models/scriptedClient.js';
import { runSupervisor } from '../src/agents/supervisor/supervisor.js';
import { createTask } from '../src/domain/jobs/createTask.js';
import { flushTelemetry } from '../src/telemetry/sentry.js';
import { startTestApi } from './helpers/api.js';
import { startSentryCollector } from './helpers/sentryCollector.js';
import { startWorker } from './helpers/worker.js';

const collector = await startSentryCollector();
const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', SENTRY_DSN: collector.dsn, ...collector.apiEnv }, { scheduler: true });
const prisma = api.server.db.prisma;
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "s"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);

/** A job whose one task ran on a real worker with Sentry on; the worker is stopped (flushed). */
async function tracedRun(name: string, code: string) {
  const w = await startWorker(api.url, wt.data.createWorkerToken.token, name, ['--python', '/usr/bin/python3'], { SENTRY_DSN: collector.dsn });
  const blob = await api.putBlob(code, user.token);
  const r = await api.gql(`mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id originalCode { id } } } }`, { i: { title: name, request: 'r', files: [{ path: 'a.py', sha256: blob.sha256 }] } }, user.token);
  const jobId = Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]!;
  const task = await createTask(api.server.resources, { jobId, kind: 'RUN', name, codeVersionId: r.data.createJob.originalCode.id, command: 'python a.py', requirements: { workload: 'python' }, maxAttempts: 1 });
  for (let i = 0; i < 300 && !['SUCCEEDED', 'FAILED'].includes((await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status); i++) await new Promise((res) => setTimeout(res, 100));
  const attempt = await prisma.attempt.findFirstOrThrow({ where: { taskId: task.id } });
  await w.stop('SIGTERM'); // flushes the worker's client
  await flushTelemetry(); // and the API's
  return { jobId, task, attempt };
}

const searchOnce = async ({ jobId, task }: { jobId: string; task: { id: string } }, args: Record<string, unknown>) => {
  const model = createScriptedClient([completed(fnCall('search_logs', args)), completed(message('ok'))]);
  const res = await runSupervisor(api.server.resources, model, jobId, { reason: 'task_failed', taskId: task.id });
  const out = await prisma.agentItem.findFirstOrThrow({ where: { runId: res.runId, type: 'function_call_output' } });
  return JSON.parse((out.payload as { output: string }).output);
};

describe('Sentry telemetry', () => {
  it('the worker sends a task.execute transaction with the four ids as tags', async () => {
    const { jobId, task, attempt } = await tracedRun('traced', 'print("traced")\n');
    const tx = collector.items.find((i) => i.header.type === 'transaction' && i.payload?.transaction === 'task.execute' && i.payload.tags?.job === jobId);
    expect(tx, `items: ${collector.items.map((i) => i.header.type).join(',')}`).toBeTruthy();
    expect(tx!.payload.tags).toMatchObject({ job: jobId, task: task.id, worker: attempt.workerId, attempt: attempt.id });
    expect(tx!.payload.contexts.trace.op).toBe('task.execute');
  });

  it('the worker and the API send one structured log per step of the attempt, each with the four ids', async () => {
    const { jobId, task, attempt } = await tracedRun('steps', 'import sys\nprint("boom coming")\nsys.exit(3)\n');
    const mine = collector.logs().filter((l) => l.attributes.attempt?.value === attempt.id);
    const steps = mine.map((l) => l.attributes.event?.value);
    // The API's claim and completion, the worker's download, start, exit, upload and completion.
    for (const s of ['claim', 'download', 'start', 'exit', 'upload', 'complete']) expect(steps, JSON.stringify(mine.map((l) => l.body))).toContain(s);
    expect(steps.filter((s) => s === 'complete')).toHaveLength(2); // one from each side
    for (const l of mine) expect({ job: l.attributes.job?.value, task: l.attributes.task?.value, worker: l.attributes.worker?.value }).toEqual({ job: jobId, task: task.id, worker: attempt.workerId });
    const exit = mine.find((l) => l.attributes.event?.value === 'exit')!;
    expect(exit.body).toMatch(/exited with code 3/);
    expect(exit.level).toBe('warn');
    expect(exit.attributes.error_class?.value).toBe('EXIT_NONZERO');
    // The API's span for the completion carries the ids too (the claim's is the 'claim' log above).
    const spans = collector.spans();
    const completeSpan = spans.find((sp) => sp.name === 'attempt.completeBatch' && sp.attributes.attempts === attempt.id);
    expect(completeSpan?.attributes).toMatchObject({ count: '1', jobs: jobId, tasks: task.id, workers: attempt.workerId, refused: '0' });
  });

  it('search_logs answers from Sentry and from storage when Sentry is up, and from storage saying Sentry is unreachable when it is down', async () => {
    const run = await tracedRun('searched', 'print("needle in the run")\nraise SystemExit(2)\n');
    const { jobId, attempt } = run;
    collector.setDown(false);
    const up = await searchOnce(run, { query: 'exited with', attemptId: attempt.id });
    await flushTelemetry();
    // The supervisor's turn ran in a span of its own.
    expect(collector.spans().some((sp) => sp.name === 'agent.supervisor' && sp.attributes.job === jobId && sp.attributes.agent === 'supervisor')).toBe(true);
    expect(up.source).toBe('Sentry and stored logs and job events (PostgreSQL)');
    expect(up.sentry.status).toBe('answered');
    expect(up.sentry.matches).toEqual([expect.objectContaining({ attemptId: attempt.id, workerId: attempt.workerId, event: 'exit', message: expect.stringMatching(/exited with code 2/) })]);
    // The request the real API made: the job's logs, this attempt, the text, with the token.
    const call = collector.apiCalls.at(-1)!;
    expect(call.searchParams.get('dataset')).toBe('ourlogs');
    expect(call.searchParams.get('query')).toBe(`job:${jobId} attempt:${attempt.id} message:"*exited with*"`);
    expect(call.searchParams.get('project')).toBe('42');
    // The stored program output answers too (the worker's own line "exited with" is there).
    const stored = await searchOnce(run, { query: 'needle' });
    expect(stored.matches.map((m: { text: string }) => m.text)).toEqual(['needle in the run']);
    expect(stored.sentry).toMatchObject({ status: 'answered', matches: [] }); // the program's output is not sent to Sentry

    collector.setDown(true);
    try {
      const down = await searchOnce(run, { query: 'needle' });
      expect(down.source).toBe('stored logs and job events (PostgreSQL); Sentry is unreachable (Sentry answered HTTP 503)');
      expect(down.sentry).toEqual({ status: 'unreachable', detail: 'Sentry answered HTTP 503' });
      expect(down.matches.map((m: { text: string }) => m.text)).toEqual(['needle in the run']);
      // Job events match too: the attempt's FAILED status change, by its id.
      const events = await searchOnce(run, { query: 'FAILED', attemptId: attempt.id });
      expect(events.events.some((e: { kind: string; payload: string }) => e.kind === 'attempt.status' && e.payload.includes(attempt.id))).toBe(true);
    } finally {
      collector.setDown(false);
    }
  });
});
