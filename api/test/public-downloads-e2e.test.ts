/**
 * Public download-then-train projects (issue 38's "Done when", docs/data-downloads.md), laid out from
 * pinned upstream snapshots (never committed here; skipped, saying so, where /work/.mirror — or
 * CORPUS_MIRROR_DIR — lacks them), submitted to the builtin planner and run by a real sandboxed worker.
 * The download source is a local HTTP server on 127.0.0.1 answering the upstream URL's path: the only
 * edit to upstream code is the URL's scheme and host (https://raw.githubusercontent.com →
 * http://127.0.0.1:PORT), since tasks may reach nothing but loopback here. The data is small and
 * made here (a text for nanoGPT), not the upstream data.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi, type TestApi } from './helpers/api.js';
import { startWorker, type TestWorker } from './helpers/worker.js';
import { MIRROR, showUpstream as show, submitProject } from './helpers/upstream.js';
import { waitFor } from './helpers/waitFor.js';

const NANOGPT = { repo: 'karpathy/nanoGPT', commit: '3adf61e154c3fe3fca428ad6bc3818b27a3b8291' };
const EXAMPLES = { repo: 'pytorch/examples', commit: '77f55b912142e11fcfdf5b530231fb9c52f181e8' };

const NANOGPT_FILES = [
  'train.py',
  'model.py',
  'configurator.py',
  'config/train_shakespeare_char.py',
  'data/shakespeare_char/prepare.py',
  'README.md',
];
const available = NANOGPT_FILES.every((f) => show(NANOGPT, f) !== null) && show(EXAMPLES, 'gcn/main.py') !== null;
if (!available)
  console.warn(
    `public-downloads-e2e skipped: the snapshots of ${NANOGPT.repo}@${NANOGPT.commit} and ${EXAMPLES.repo}@${EXAMPLES.commit} are not under ${MIRROR}`,
  );

// Small data: a text of ~60 kB, served at the upstream path.
const TEXT = Array.from({ length: 1500 }, (_, i) => `Line ${i}: to be, or not to be, that is the question.\n`).join('');
const seen: string[] = [];
const source: Server = createServer((req, res) => {
  seen.push(req.url ?? '');
  if (req.url === '/karpathy/char-rnn/master/data/tinyshakespeare/input.txt') res.end(TEXT);
  else res.writeHead(404).end();
});

let api: TestApi | null = null;
let worker: TestWorker | null = null;
let user: { token: string } = { token: '' };
let port = 0;
afterAll(async () => {
  await worker?.stop();
  await api?.server.close();
  source.close();
});

const JOB = `query($id: ID!) { job(id: $id) { status statusReason currentPlan { summary steps command } outputs { path } } }`;

const submit = (files: Record<string, string>, request: string) => submitProject(api!, user.token, files, request, 'public download');
const finished = (id: string) =>
  waitFor(
    async () => {
      const j = (await api!.gql(JOB, { id }, user.token)).data.job;
      return ['SUCCEEDED', 'FAILED', 'NEEDS_INPUT', 'CANCELLED', 'STOPPED'].includes(j.status) ? j : null;
    },
    500_000,
    'job done',
  );
async function logOf(jobId: string) {
  const lines = await api!.server.db.prisma.logChunk.findMany({
    where: { attempt: { task: { jobId } } },
    orderBy: [{ attemptId: 'asc' }, { seq: 'asc' }],
    include: { attempt: { select: { task: { select: { name: true } } } } },
  });
  return lines.map((l) => `[${l.attempt.task.name}] ${l.stream}: ${l.text}`).join('\n');
}

describe.skipIf(!available)('public download-then-train projects (needs the upstream snapshots)', () => {
  it('starts', async () => {
    await new Promise<void>((r) => source.listen(0, '127.0.0.1', r));
    port = (source.address() as AddressInfo).port;
    api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
    user = await api.signUp();
    const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
    worker = await startWorker(api.url, wt.data.createWorkerToken.token, 'public-dl', ['--python', '/usr/bin/python3']);
    expect(worker.name).toBe('public-dl');
  }, 120_000);

  it(`${NANOGPT.repo} shakespeare_char: prepare.py downloads in its own step, train.py trains without network; a second job reuses the cache`, async () => {
    const files = Object.fromEntries(NANOGPT_FILES.map((f) => [f, show(NANOGPT, f)!]));
    files['data/shakespeare_char/prepare.py'] = files['data/shakespeare_char/prepare.py']!.replace(
      'https://raw.githubusercontent.com/',
      `http://127.0.0.1:${port}/`,
    );
    const request =
      'Run nanoGPT with config/train_shakespeare_char.py on CPU without torch.compile: 20 iterations, n_layer 2, n_head 2, n_embd 64, block size 64, batch size 12, evaluating every 10 iterations on 5 batches, and keep the checkpoint.';
    const { id, jobId } = await submit(files, request);
    const job = await finished(id);
    const log = await logOf(jobId);
    console.log(
      `nanoGPT plan: ${JSON.stringify(job.currentPlan, null, 1)}\n${log
        .split('\n')
        .filter((l) => l.includes('worker:'))
        .join('\n')}`,
    );
    expect(job.status, `${job.statusReason}\n${log.slice(-3000)}`).toBe('SUCCEEDED');
    expect(job.currentPlan.summary).toContain('data/shakespeare_char/prepare.py downloads its data (requests;');
    expect(log).toMatch(
      /\[step:prepare-data\] system: worker: running `cd data\/shakespeare_char && python prepare\.py` \(attempt 1; sandbox \w+, network host/,
    );
    expect(log).toMatch(/\[run\] system: worker: running `python train\.py [^`]*` \(attempt \d+; sandbox \w+, network isolated/);
    expect(seen).toEqual(['/karpathy/char-rnn/master/data/tinyshakespeare/input.txt']);
    const again = await submit(files, request);
    const job2 = await finished(again.id);
    expect(job2.status).toBe('SUCCEEDED');
    expect(await logOf(again.jobId)).toContain("worker: data download found in this worker's cache");
    expect(seen).toHaveLength(1);
  }, 1_000_000);

  it(`${EXAMPLES.repo} gcn: its main.py downloads Cora while it runs — the plan says the run has no network, and the run fails there`, async () => {
    const before = seen.length;
    const main = show(EXAMPLES, 'gcn/main.py')!.replace('https://linqs-data.soe.ucsc.edu/', `http://127.0.0.1:${port}/`);
    const { id, jobId } = await submit(
      { 'gcn/main.py': main, 'gcn/requirements.txt': show(EXAMPLES, 'gcn/requirements.txt') ?? 'torch\n' },
      'Train the GCN for 5 epochs on the CPU.',
    );
    // The workers' torch is older than gcn's (torch.accelerator): the planner asks; migrating is the first choice.
    const asked = await finished(id);
    if (asked.status === 'NEEDS_INPUT') {
      const q = (await api!.gql(`query($id: ID!) { job(id: $id) { openQuestions { id choices } } }`, { id }, user.token)).data.job
        .openQuestions[0];
      await api!.gql(
        `mutation($i: AnswerQuestionInput!) { answerQuestion(input: $i) { __typename } }`,
        { i: { questionId: q.id, answer: q.choices[0] } },
        user.token,
      );
      await waitFor(async () => (await api!.gql(JOB, { id }, user.token)).data.job.status !== 'NEEDS_INPUT' || null, 60_000, 'answered');
    }
    const job = await finished(id);
    const log = await logOf(jobId);
    console.log(`gcn plan: ${JSON.stringify(job.currentPlan, null, 1)}\n${job.status}: ${job.statusReason}\n${log.slice(-1500)}`);
    expect(job.currentPlan.summary).toContain('gcn/main.py downloads data while it runs');
    expect(job.currentPlan.summary).toContain('the run has no network');
    expect(job.status).toBe('FAILED');
    expect(log).toMatch(/network isolated/);
    expect(seen.length).toBe(before);
  }, 600_000);
});
