/**
 * A data-download step that only refusing workers could run (docs/data-downloads.md, "Placement by
 * policy"; domain/workers/downloadWait.ts): after DOWNLOAD_WAIT_SEC the tick fails it, and the job
 * stops before its run with a reason naming the URL, the refusing workers' policies and what to do.
 * Builtin planner, real scheduler ticks (every second, the wait 1 s), real PostgreSQL; the workers are
 * protocol doubles registered through workerHello (placement-network.test.ts), none of them claims.
 *   - no worker online at all: the step keeps waiting (any worker that comes may take it);
 *   - an allowing worker online beside a refusing one: nothing fails, the allowing one gets the step;
 *   - only a refusing worker online: the step fails, the job FAILS, the run never starts;
 *   - the rule alone: a worker that could not run the step anyway (another workload) is no refusal.
 */
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { downloadPlacement, refusedDownloadReason } from '../src/domain/workers/downloadWait.js';
import { onlineWorkers } from '../src/domain/workers/placement.js';
import { startTestApi } from './helpers/api.js';
import { CPU_CAPS, createWorkerToken, ProtocolWorker } from './helpers/protocolClient.js';
import { waitFor } from './helpers/waitFor.js';

const WAIT_SEC = 1;
const URL = 'http://127.0.0.1:9/corpus/input.txt';
const PREPARE = [
  'import os',
  'import urllib.request',
  '',
  `URL = "${URL}"`,
  'here = os.path.dirname(os.path.abspath(__file__))',
  'text = urllib.request.urlopen(URL, timeout=20).read().decode()',
  "with open(os.path.join(here, 'corpus.txt'), 'w') as f:",
  '    f.write(text)',
].join('\n');
const TRAIN = ["text = open('corpus.txt').read()", 'print(len(text))'].join('\n');
const policy = (allowNetwork: string, caps: object = CPU_CAPS) => ({ ...caps, allowNetwork });

const api = await startTestApi(
  { TICK_INTERVAL_SEC: '1', DOWNLOAD_WAIT_SEC: String(WAIT_SEC) },
  { scheduler: true, model: createBuiltinClient() },
);
const prisma = api.server.db.prisma;
const user = await api.signUp();
const token = await createWorkerToken(api, user.token);
const never = new ProtocolWorker(api, token, 'no-net-box');
const downloads = new ProtocolWorker(api, token, 'dl-box');

async function submit() {
  const files = [];
  for (const [p, content] of Object.entries({ 'prepare.py': PREPARE, 'train.py': TRAIN }))
    files.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } } }`,
    { i: { title: 'download then train', request: 'train it on the corpus', files } },
    user.token,
  );
  const id = r.data.createJob.id as string;
  return { id, jobId: Buffer.from(id, 'base64').toString().split(':')[1]! };
}

/** The job's download step once planned and queued. */
const queuedStep = (jobId: string) =>
  waitFor(
    () => prisma.task.findFirst({ where: { jobId, name: 'step:prepare-data', status: 'QUEUED' } }),
    60_000,
    'the download step queued',
  );

/** Resolves once a scheduler tick ran at a time past the step's wait (so the failing rule has looked at it). */
async function tickedPastWait(step: { runAfter: Date }) {
  const deadline = step.runAfter.getTime() + (WAIT_SEC + 1) * 1000;
  await waitFor(
    async () => ((await prisma.schedulerState.findUnique({ where: { id: 1 } }))?.lastTickAt.getTime() ?? 0) > deadline,
    30_000,
    'a tick past the wait',
  );
}

const jobOf = async (id: string) =>
  (await api.gql(`query($id: ID!) { job(id: $id) { status statusReason } }`, { id }, user.token)).data.job as {
    status: string;
    statusReason: string | null;
  };

const cancel = (id: string) => api.gql(`mutation($id: ID!) { cancelJob(id: $id) { __typename } }`, { id }, user.token);

describe('a download step no online worker allows', () => {
  it('no worker online at all: it keeps waiting', { timeout: 90_000 }, async () => {
    const { id, jobId } = await submit();
    const step = await queuedStep(jobId);
    expect(step.requirements).toMatchObject({ network: true, download: { urls: [URL] } });
    await tickedPastWait(step);
    const now = await prisma.task.findUniqueOrThrow({ where: { id: step.id } });
    expect(now.status).toBe('QUEUED');
    expect(now.statusReason).toContain('no online worker allows downloads). Online workers: none.');
    expect((await jobOf(id)).status).toBe('RUNNING');
    await cancel(id);
  });

  it(
    'an allowing worker online beside a refusing one: nothing fails, and the allowing one gets the step',
    { timeout: 90_000 },
    async () => {
      expect((await never.hello({ capabilities: policy('never') })).__typename).toBe('WorkerHelloResult');
      expect((await downloads.hello({ capabilities: policy('downloads') })).__typename).toBe('WorkerHelloResult');
      const { id, jobId } = await submit();
      const step = await queuedStep(jobId);
      await tickedPastWait(step);
      expect((await prisma.task.findUniqueOrThrow({ where: { id: step.id } })).status).toBe('QUEUED');
      expect((await jobOf(id)).status).toBe('RUNNING');
      expect(await never.claim({ max: 1 })).toEqual([]);
      const [a] = await downloads.claim({ max: 1 });
      expect(a!.task.id).toBe(step.id);
      await cancel(id);
    },
  );

  it(
    'only a refusing worker online: the step fails after the wait and the job stops before its run, naming the URL and the policy',
    { timeout: 90_000 },
    async () => {
      await prisma.worker.updateMany({ where: { id: downloads.workerId }, data: { status: 'OFFLINE' } });
      const { id, jobId } = await submit();
      const step = await queuedStep(jobId);
      const job = await waitFor(
        async () => {
          const j = await jobOf(id);
          return j.status === 'RUNNING' ? null : j;
        },
        30_000,
        'the job to end',
      );
      expect(job.status).toBe('FAILED');
      expect(job.statusReason).toContain('The pipeline step "prepare-data" failed: NETWORK_REFUSED: this step downloads data from ' + URL);
      expect(job.statusReason).toContain(`after ${WAIT_SEC} s no online worker allows it`);
      expect(job.statusReason).toContain('no-net-box runs with --allow-network never');
      expect(job.statusReason).toContain('start a worker with --allow-network downloads, or upload the data with the code');
      // The step failed unclaimed, and the run never started.
      const failed = await prisma.task.findUniqueOrThrow({ where: { id: step.id } });
      expect(failed.status).toBe('FAILED');
      expect(await prisma.attempt.count({ where: { task: { jobId } } })).toBe(0);
      expect(await prisma.task.count({ where: { jobId, name: 'run' } })).toBe(0);
      // The job's events say why (the job page and `watch` read them).
      const events = await prisma.jobEvent.findMany({ where: { jobId, kind: 'task.status' } });
      expect(events.map((e) => e.payload)).toContainEqual(
        expect.objectContaining({ taskId: step.id, status: 'FAILED', reason: failed.statusReason }),
      );
      expect(failed.statusReason).toContain(URL);
    },
  );

  it('the rule: refused only where an online worker could run the step but for its policy', async () => {
    const step = await prisma.task.findFirstOrThrow({ where: { name: 'step:prepare-data', status: 'FAILED' } });
    const [box] = (await onlineWorkers(prisma)).filter((w) => w.name === 'no-net-box');
    expect(downloadPlacement(step, [box!], 0)).toEqual({ state: 'refused', refusing: [box] });
    // No worker online, or only one that could not run it anyway (no python): waiting, as any task.
    expect(downloadPlacement(step, [], 0)).toEqual({ state: 'waiting' });
    expect(downloadPlacement(step, [{ ...box!, workloads: ['shell'] }], 0)).toEqual({ state: 'waiting' });
    // A worker that allows downloads: allowed.
    expect(downloadPlacement(step, [box!, { ...box!, capabilities: policy('downloads') }], 0)).toEqual({ state: 'allowed' });
  });

  it('the reason with several refusing workers and with no URL recorded', () => {
    const refusing = Array.from({ length: 7 }, (_, i) => ({ name: `w${i}`, capabilities: { allowNetwork: 'never' } }));
    const reason = refusedDownloadReason({ network: true, download: { urls: ['http://a/x', 'http://b/y'] } }, refusing, 600);
    expect(reason).toContain('downloads data from http://a/x, http://b/y, and after 10 min');
    expect(reason).toContain('(w0 runs with --allow-network never; w1 runs with --allow-network never');
    expect(reason).toContain('w4 runs with --allow-network never and 2 more)');
    expect(refusedDownloadReason({ network: true, download: {} }, refusing.slice(1, 2), 30)).toContain(
      'from URLs its code builds (the plan names none), and after 30 s',
    );
  });
});
