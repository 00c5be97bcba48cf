/**
 * Telemetry, end to end through a local Sentry (ingest and web API on 127.0.0.1, speaking
 * Sentry's wire formats, so the real @sentry/node clients of the API and of a real worker are
 * exercised): the worker sends a `task.execute` transaction and one structured log per step
 * of the attempt, the API one per step it sees (claim, complete), all carrying the job, task,
 * worker and attempt ids; a worker's failure of an attempt and an API error about one are
 * error events tagged with those ids; the supervisor's search_logs reads logs and error events
 * back from Sentry's API and says so, and when that API (or either query) is down it says
 * Sentry is unreachable and answers from the stored logs. Without a DSN nothing is sent (the
 * other suites run that way).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { completed, createScriptedClient, fnCall, message } from '../src/agents/models/scriptedClient.js';
import { runSupervisor } from '../src/agents/supervisor/supervisor.js';
import { createTask } from '../src/domain/jobs/createTask.js';
import { flushTelemetry, reportError, withSpan } from '../src/telemetry/sentry.js';
import { startTestApi } from './helpers/api.js';
import { startSentryCollector } from './helpers/sentryCollector.js';
import { startWorker } from './helpers/worker.js';

const collector = await startSentryCollector();
const api = await startTestApi(
  { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', SENTRY_DSN: collector.dsn, ...collector.apiEnv },
  { scheduler: true },
);
const prisma = api.server.db.prisma;
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "s"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);

/**
 * A job whose one task ran on a real worker with Sentry on; the worker is stopped (flushed).
 * `missingFile`: the code version names a blob that was never uploaded, so the worker fails the
 * attempt itself (DOWNLOAD_FAILED).
 */
async function tracedRun(name: string, code: string, opts: { missingFile?: boolean } = {}) {
  const w = await startWorker(api.url, wt.data.createWorkerToken.token, name, ['--python', '/usr/bin/python3'], {
    SENTRY_DSN: collector.dsn,
  });
  const blob = await api.putBlob(code, user.token);
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id originalCode { id } } } }`,
    { i: { title: name, request: 'r', files: [{ path: 'a.py', sha256: blob.sha256 }] } },
    user.token,
  );
  const jobId = Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]!;
  if (opts.missingFile) {
    const cv = await prisma.codeVersion.findUniqueOrThrow({ where: { id: r.data.createJob.originalCode.id } });
    const manifest = (cv.manifest as { sha256: string }[]).map((f) => ({ ...f, sha256: randomBytes(32).toString('hex') }));
    await prisma.codeVersion.update({ where: { id: cv.id }, data: { manifest } });
  }
  const task = await createTask(api.server.resources, {
    jobId,
    kind: 'RUN',
    name,
    codeVersionId: r.data.createJob.originalCode.id,
    command: 'python a.py',
    requirements: { workload: 'python' },
    maxAttempts: 1,
  });
  for (
    let i = 0;
    i < 300 && !['SUCCEEDED', 'FAILED'].includes((await prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status);
    i++
  )
    await new Promise((res) => setTimeout(res, 100));
  const attempt = await prisma.attempt.findFirstOrThrow({ where: { taskId: task.id } });
  await w.stop('SIGTERM'); // flushes the worker's client
  await flushTelemetry(); // and the API's
  return { jobId, task, attempt };
}

/** Flushes the API's client until `done` (what it sent reached the collector), at most 10 s. */
async function arrived(done: () => boolean) {
  for (let i = 0; i < 20 && !done(); i++) {
    await flushTelemetry();
    if (!done()) await new Promise((res) => setTimeout(res, 500));
  }
  expect(
    done(),
    JSON.stringify(
      collector.items
        .filter((i) => i.header.type === 'client_report')
        .map((i) => i.payload.discarded_events)
        .slice(-6),
    ),
  ).toBe(true);
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
    const tx = collector.items.find(
      (i) => i.header.type === 'transaction' && i.payload?.transaction === 'task.execute' && i.payload.tags?.job === jobId,
    );
    expect(tx, `items: ${collector.items.map((i) => i.header.type).join(',')}`).toBeTruthy();
    expect(tx!.payload.tags).toMatchObject({ job: jobId, task: task.id, worker: attempt.workerId, attempt: attempt.id });
    expect(tx!.payload.contexts.trace.op).toBe('task.execute');
  });

  it('the worker and the API send one structured log per step of the attempt, each with the four ids', async () => {
    const { jobId, task, attempt } = await tracedRun('steps', 'import sys\nprint("boom coming")\nsys.exit(3)\n');
    const mine = collector.logs().filter((l) => l.attributes.attempt?.value === attempt.id);
    const steps = mine.map((l) => l.attributes.event?.value);
    // The API's claim and completion, the worker's download, start, exit, upload and completion.
    for (const s of ['claim', 'download', 'start', 'exit', 'upload', 'complete'])
      expect(steps, JSON.stringify(mine.map((l) => l.body))).toContain(s);
    expect(steps.filter((s) => s === 'complete')).toHaveLength(2); // one from each side
    for (const l of mine)
      expect({ job: l.attributes.job?.value, task: l.attributes.task?.value, worker: l.attributes.worker?.value }).toEqual({
        job: jobId,
        task: task.id,
        worker: attempt.workerId,
      });
    const exit = mine.find((l) => l.attributes.event?.value === 'exit')!;
    expect(exit.body).toMatch(/exited with code 3/);
    expect(exit.level).toBe('warn');
    expect(exit.attributes.error_class?.value).toBe('EXIT_NONZERO');
    // The API's span for the completion carries the ids too.
    const spans = collector.spans();
    const completeSpan = spans.find((sp) => sp.name === 'attempt.completeBatch' && sp.attributes.attempts === attempt.id);
    expect(completeSpan?.attributes).toMatchObject({ count: '1', jobs: jobId, tasks: task.id, workers: attempt.workerId, refused: '0' });
    // And its span for the claim that leased the attempt: the worker, the attempt and its job.
    const claimSpan = spans.find(
      (sp) =>
        sp.name === 'attempt.claim' &&
        String(sp.attributes.attempts ?? '')
          .split(',')
          .includes(attempt.id),
    );
    expect(claimSpan, JSON.stringify(spans.filter((sp) => sp.name === 'attempt.claim'))).toBeTruthy();
    expect(claimSpan!.attributes.worker).toBe(attempt.workerId);
    expect(String(claimSpan!.attributes.jobs).split(',')).toContain(jobId);
    // A one-slot worker claims one attempt: its ids also under the four names every span uses.
    expect(claimSpan!.attributes).toMatchObject({ claimed: '1', attempt: attempt.id, task: task.id, job: jobId, worker: attempt.workerId });
  });

  it('search_logs answers from Sentry and from storage when Sentry is up, and from storage saying Sentry is unreachable when it is down', async () => {
    const run = await tracedRun('searched', 'print("needle in the run")\nraise SystemExit(2)\n');
    const { jobId, attempt } = run;
    collector.setDown(false);
    const up = await searchOnce(run, { query: 'exited with', attemptId: attempt.id });
    await flushTelemetry();
    // The supervisor's turn ran in a span of its own.
    expect(
      collector.spans().some((sp) => sp.name === 'agent.supervisor' && sp.attributes.job === jobId && sp.attributes.agent === 'supervisor'),
    ).toBe(true);
    expect(up.source).toBe('Sentry and stored logs and job events (PostgreSQL)');
    expect(up.sentry.status).toBe('answered');
    expect(up.sentry.matches).toEqual([
      expect.objectContaining({
        attemptId: attempt.id,
        workerId: attempt.workerId,
        event: 'exit',
        message: expect.stringMatching(/exited with code 2/),
      }),
    ]);
    // The requests the real API made: the job's logs and its error events, this attempt, the text, with the token.
    const calls = collector.apiCalls.slice(-2);
    expect(calls.map((c) => c.searchParams.get('dataset')).sort()).toEqual(['errors', 'ourlogs']);
    for (const call of calls) {
      expect(call.searchParams.get('query')).toBe(`job:"${jobId}" attempt:"${attempt.id}" message:"*exited with*"`);
      expect(call.searchParams.get('project')).toBe('42');
    }
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
      expect(
        events.events.some((e: { kind: string; payload: string }) => e.kind === 'attempt.status' && e.payload.includes(attempt.id)),
      ).toBe(true);
      // One of the two queries failing is enough: the logs answer, the error events do not.
      collector.setDown('errors');
      const half = await searchOnce(run, { query: 'exited with' });
      expect(half.sentry).toEqual({ status: 'unreachable', detail: 'Sentry answered HTTP 503' });
      expect(half.source).toBe('stored logs and job events (PostgreSQL); Sentry is unreachable (Sentry answered HTTP 503)');
    } finally {
      collector.setDown(false);
    }
  });

  it("a worker's failure of an attempt is an error event tagged with the four ids, and search_logs returns it from Sentry", async () => {
    const run = await tracedRun('broken-download', 'print("never runs")\n', { missingFile: true });
    const { jobId, task, attempt } = run;
    expect(attempt.errorClass).toBe('DOWNLOAD_FAILED');
    // The error event the worker sent, from the envelope: the four ids (and the step and class) as tags.
    const sent = collector.errors().filter((e) => e.tags?.attempt === attempt.id);
    expect(sent, JSON.stringify(collector.errors().map((e) => e.tags))).toHaveLength(1);
    expect(sent[0]!.tags).toMatchObject({
      job: jobId,
      task: task.id,
      worker: attempt.workerId,
      attempt: attempt.id,
      event: 'error',
      error_class: 'DOWNLOAD_FAILED',
    });
    expect(sent[0]!.level).toBe('error');
    expect(sent[0]!.exception?.values?.at(-1)).toMatchObject({
      type: 'DOWNLOAD_FAILED',
      value: expect.stringMatching(/download of [0-9a-f]{64} failed: HTTP 404/),
    });

    const found = await searchOnce(run, { query: 'failed: HTTP 404', attemptId: attempt.id });
    expect(found.source).toBe('Sentry and stored logs and job events (PostgreSQL)');
    expect(found.sentry.status).toBe('answered');
    const errorLines = found.sentry.matches.filter((m: { kind: string }) => m.kind === 'error');
    expect(errorLines).toEqual([
      expect.objectContaining({
        kind: 'error',
        event: 'exception',
        severity: 'error',
        attemptId: attempt.id,
        taskId: task.id,
        workerId: attempt.workerId,
        errorClass: 'DOWNLOAD_FAILED',
        eventId: sent[0]!.event_id,
        message: expect.stringMatching(/^DOWNLOAD_FAILED: download of .* failed: HTTP 404$/),
      }),
    ]);
    // The worker's structured log of the same step answers beside it, both in time order.
    expect(found.sentry.matches.some((m: { kind: string; event: string }) => m.kind === 'log' && m.event === 'error')).toBe(true);
    const times = found.sentry.matches.map((m: { at: string }) => Date.parse(m.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const errorsCall = collector.apiCalls.slice(-2).find((c) => c.searchParams.get('dataset') === 'errors')!;
    expect(errorsCall.searchParams.get('query')).toBe(`job:"${jobId}" attempt:"${attempt.id}" message:"*failed: HTTP 404*"`);
    expect(errorsCall.searchParams.getAll('field')).toEqual(
      expect.arrayContaining(['timestamp', 'title', 'message', 'level', 'job', 'task', 'worker', 'attempt']),
    );

    // Bounded like the logs: a window before the run has none of it; a limit of 1, one line.
    const before = await searchOnce(run, {
      query: 'failed: HTTP 404',
      attemptId: attempt.id,
      until: new Date(attempt.createdAt.getTime() - 60_000).toISOString(),
    });
    expect(before.sentry).toEqual({ status: 'answered', matches: [] });
    const one = await searchOnce(run, { query: 'failed: HTTP 404', attemptId: attempt.id, limit: 1 });
    expect(one.sentry.matches).toHaveLength(1);
  });

  it("the API's errors about an attempt carry the ids its span knew as tags, and search_logs finds them", async () => {
    const run = await tracedRun('api-error', 'print("fine")\n');
    const { jobId, task, attempt } = run;
    const message = `boom in the API ${randomBytes(4).toString('hex')}`;
    await flushTelemetry(); // the run's spans and logs sent first: the client's queue is bounded
    // What a worker-protocol resolver does (WorkerProtocol.ts): a span named for the attempt, the
    // rest of the ids learned on the way; an unexpected error then reaches reportError (server.ts).
    const err = await withSpan('attempt.complete', { attempt: attempt.id }, async (span) => {
      span?.setAttributes({ job: jobId, task: task.id, worker: attempt.workerId! });
      throw new Error(message);
    }).catch((e: unknown) => e);
    reportError(err, { ref: 'r1' });
    // A plural attribute holding one id counts; one holding several does not.
    const err2 = await withSpan('attempt.claim', { worker: attempt.workerId! }, async (span) => {
      span?.setAttributes({ attempts: `${attempt.id},other`, jobs: jobId });
      throw new Error(`${message} (claim)`);
    }).catch((e: unknown) => e);
    reportError(err2, { ref: 'r2' });
    await arrived(() => collector.errors().filter((e) => String(e.exception?.values?.at(-1)?.value).startsWith(message)).length === 2);
    const ev = collector.errors().find((e) => e.exception?.values?.at(-1)?.value === message);
    expect(ev?.tags).toMatchObject({ job: jobId, task: task.id, worker: attempt.workerId, attempt: attempt.id });
    expect(ev?.extra).toMatchObject({ ref: 'r1' });
    const ev2 = collector.errors().find((e) => e.exception?.values?.at(-1)?.value === `${message} (claim)`);
    expect(ev2?.tags).toMatchObject({ job: jobId, worker: attempt.workerId });
    expect(ev2?.tags?.attempt).toBeUndefined();

    const found = await searchOnce(run, { query: message, attemptId: attempt.id });
    expect(found.sentry.status).toBe('answered');
    expect(found.sentry.matches).toEqual([
      expect.objectContaining({
        kind: 'error',
        event: 'exception',
        severity: 'error',
        attemptId: attempt.id,
        taskId: task.id,
        workerId: attempt.workerId,
        message: `Error: ${message}`,
      }),
    ]);
  });
});
