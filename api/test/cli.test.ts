/**
 * The `chatgpu` command as a user runs it: a real API on 127.0.0.1, the real CLI as a
 * child process (`node api/bin/chatgpu.mjs …`), and only the public API between them.
 * Rows the planner and workers would write are seeded directly into the database.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { recordJobEvent } from '../src/domain/jobs/jobEvents.js';
import { rawId, sha256, startTestApi, type TestApi } from './helpers/api.js';
import { waitFor } from './helpers/waitFor.js';
import { runCli, startCli } from './helpers/cli.js';
import { freePort } from './helpers/processes.js';

const api: TestApi = await startTestApi();
// No agents here (startTestApi's default): the planner and workers are played by rows this file seeds.
const prisma = api.server.db.prisma;
const user = await api.signUp();
const tmp = await mkdtemp(path.join(tmpdir(), 'chatgpu-cli-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));

/** An environment with no token and no saved login or local user to fall back on. */
const isolated = (extra: Record<string, string> = {}) => ({
  HOME: path.join(tmp, 'home'),
  XDG_CONFIG_HOME: path.join(tmp, 'home/.config'),
  CHATGPU_DATA_DIR: path.join(tmp, 'no-data'),
  ...extra,
});
const withToken = (token = user.token) => isolated({ CHATGPU_TOKEN: token });
const srv = ['--server', api.url];

async function writeTree(root: string, files: Record<string, string | Buffer>) {
  for (const [p, content] of Object.entries(files)) {
    const f = path.join(root, p);
    await mkdir(path.dirname(f), { recursive: true });
    await writeFile(f, content);
  }
}

async function jobFiles(gid: string, token = user.token) {
  const r = await api.gql(
    `query($id: ID!) { job(id: $id) { title request status spendingCapCad hardwarePreference originalCode { files { path sha256 size mode } } } }`,
    { id: gid },
    token,
  );
  return r.data.job;
}

/** A worker row for seeded attempts (attempts need one). */
async function seedWorker(name: string) {
  await api.gql(`mutation { createWorkerToken(input: {name: "${name}"}) { __typename } }`, {}, user.token);
  const token = await prisma.workerToken.findFirstOrThrow({ where: { userId: user.userId, name } });
  return prisma.worker.create({ data: { ownerId: user.userId, tokenId: token.id, name } });
}

async function emitEvent(jobId: string, kind: Parameters<typeof recordJobEvent>[2], payload: any) {
  const eventId = await recordJobEvent(prisma, jobId, kind, payload);
  await api.server.pubsub.emit({ type: 'job.event', jobId, eventId });
  return eventId;
}

const project = path.join(tmp, 'project');
const projectFiles: Record<string, string | Buffer> = {
  'train.py': 'import argparse\nprint("training")\n',
  'data/points.csv': 'x,y\n1,2\n3,4\n',
  'lib/util.py': 'def f():\n    return 1\n',
  'weights.bin': randomBytes(70_000),
  'notes.log': 'ignored by .gitignore\n',
  'build/out.txt': 'ignored folder\n',
  '.gitignore': '# local junk\n*.log\nbuild/\n',
  '.git/HEAD': 'ref: refs/heads/main\n',
  'node_modules/x/index.js': 'module.exports = 1\n',
  '__pycache__/train.cpython-311.pyc': 'bytecode',
  'lib/util.pyc': 'bytecode',
  '.venv/bin/python': 'not shipped',
  '.chatgpu/local.json': '{}',
};
await writeTree(project, projectFiles);
await chmod(path.join(project, 'train.py'), 0o755);

describe('chatgpu submit, jobs, cancel', () => {
  let gid = '';

  it('submit uploads the folder (skipping ignored files) and creates the job', async () => {
    const r = await runCli(
      ['submit', project, '-m', 'train it for 2 epochs', '--title', 'CLI job', '--cap', '2.5', '--hardware', 'cpu', ...srv],
      { env: withToken() },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const m = r.stdout.match(/Job (\S+) submitted: (\S+)/);
    expect(m, r.stdout).toBeTruthy();
    gid = m![1]!;
    expect(m![2]).toBe(`${api.url}/jobs/${encodeURIComponent(gid)}`);
    expect(r.stdout).toMatch(/Uploaded 5 files/);

    const job = await jobFiles(gid);
    expect(job).toMatchObject({
      title: 'CLI job',
      request: 'train it for 2 epochs',
      status: 'DRAFT',
      spendingCapCad: 2.5,
      hardwarePreference: 'cpu',
    });
    const files = job.originalCode.files as { path: string; sha256: string; size: number; mode: number }[];
    expect(files.map((f) => f.path).sort()).toEqual(['.gitignore', 'data/points.csv', 'lib/util.py', 'train.py', 'weights.bin']);
    for (const f of files) {
      const expected =
        typeof projectFiles[f.path] === 'string' ? Buffer.from(projectFiles[f.path] as string) : (projectFiles[f.path] as Buffer);
      expect(f.sha256).toBe(sha256(expected));
      expect(f.size).toBe(expected.length);
      const blob = await api.getBlob(f.sha256, user.token);
      expect(blob.status).toBe(200);
      expect(blob.bytes.equals(expected)).toBe(true);
    }
    expect(files.find((f) => f.path === 'train.py')!.mode & 0o111).not.toBe(0);
    expect(files.find((f) => f.path === 'lib/util.py')!.mode & 0o111).toBe(0);
  });

  it('submit --json prints the job as JSON; jobs lists jobs newest first, filtered by status', async () => {
    const small = path.join(tmp, 'small');
    await writeTree(small, { 'sim.py': 'print(1)\n' });
    const r = await runCli(['submit', small, '-m', 'run the simulation', '--json', ...srv], { env: withToken() });
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ title: 'small', status: 'DRAFT', files: 1 });

    const list = await runCli(['jobs', ...srv], { env: withToken() });
    expect(list.code).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+TITLE\s+STATUS\s+COST \(CAD\)\s+AGE$/);
    expect(lines[1]).toContain(j.id);
    expect(lines[1]).toMatch(/small\s+DRAFT\s+0\.00\s+\d+s/);
    expect(lines[2]).toContain(gid);
    expect(lines[2]).toMatch(/CLI job\s+DRAFT\s+0\.00 \/ 2\.50/);

    const none = await runCli(['jobs', '--status', 'running', ...srv], { env: withToken() });
    expect(none.stdout).toMatch(/No jobs in RUNNING/);
    const one = await runCli(['jobs', '--first', '1', '--json', ...srv], { env: withToken() });
    expect(JSON.parse(one.stdout)).toMatchObject({ totalCount: 2, jobs: [{ id: j.id }] });
  });

  it('cancel cancels the job; a second cancel says why it cannot', async () => {
    const r = await runCli(['cancel', gid, ...srv], { env: withToken() });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Cancelled job/);
    expect((await prisma.job.findUniqueOrThrow({ where: { id: rawId(gid) } })).status).toBe('CANCELLED');
    const again = await runCli(['cancel', rawId(gid), ...srv], { env: withToken() });
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('chatgpu: The job is already cancelled.\n');
  });

  it("another user's token does not see or cancel the job", async () => {
    const other = await api.signUp();
    const r = await runCli(['cancel', gid, ...srv], { env: withToken(other.token) });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^chatgpu: No job \S+ \(or it is not yours\)\.\n$/);
    const l = await runCli(['jobs', ...srv], { env: withToken(other.token) });
    expect(l.stdout).toMatch(/No jobs yet/);
  });
});

describe('finding the server and the token', () => {
  it('no token: one sentence and a non-zero exit code', async () => {
    const r = await runCli(['jobs', ...srv], { env: isolated() });
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^chatgpu: No API token for http:\/\/127\.0\.0\.1:\d+: run `chatgpu login/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('unreachable server: one sentence and a non-zero exit code', async () => {
    const port = await freePort();
    // CHATGPU_RETRY_SEC=0: fail at once (outages.test.ts covers waiting the outage out).
    const r = await runCli(['submit', project, '-m', 'x', '--server', `http://127.0.0.1:${port}`], {
      env: { ...withToken(), CHATGPU_RETRY_SEC: '0' },
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toBe(
      `chatgpu: Cannot reach the ChatGPU server at http://127.0.0.1:${port} (connection refused): start it with \`npm start\`, or point --server or CHATGPU_URL at a running one.\n`,
    );
  });

  it('a rejected token: one sentence naming where the token came from', async () => {
    const r = await runCli(['jobs', ...srv], { env: withToken('cg_api_not-a-real-token') });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^chatgpu: The server at http:\/\/127\.0\.0\.1:\d+ rejected the CHATGPU_TOKEN token: run `chatgpu login`/);
  });

  it("uses the embedded default's local user token from the data folder, and CHATGPU_URL", async () => {
    const dataDir = path.join(tmp, 'data');
    await mkdir(dataDir, { recursive: true });
    await writeFile(path.join(dataDir, 'local.json'), JSON.stringify({ email: user.email, apiToken: user.token }));
    const r = await runCli(['jobs', '--json'], { env: isolated({ CHATGPU_DATA_DIR: dataDir, CHATGPU_URL: api.url }) });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout).totalCount).toBeGreaterThan(0);
    // …found upwards from the working folder too (`.chatgpu/local.json`)
    const proj = path.join(tmp, 'ws');
    await mkdir(path.join(proj, '.chatgpu'), { recursive: true });
    await mkdir(path.join(proj, 'sub/dir'), { recursive: true });
    await writeFile(path.join(proj, '.chatgpu/local.json'), JSON.stringify({ apiToken: user.token }));
    const env = isolated({ CHATGPU_URL: api.url });
    delete (env as Record<string, string>).CHATGPU_DATA_DIR;
    const up = await runCli(['jobs', '--json'], { env, cwd: path.join(proj, 'sub/dir') });
    expect(up.stderr).toBe('');
    expect(JSON.parse(up.stdout).totalCount).toBeGreaterThan(0);
  });

  it('login reads email and password from stdin, saves the token (0600), and later commands use it', async () => {
    const home = path.join(tmp, 'login-home');
    const env = { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), CHATGPU_DATA_DIR: path.join(tmp, 'no-data') };
    const bad = await runCli(['login', ...srv], { env, input: `${user.email}\nwrong password\n` });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/Login failed/);
    const r = await runCli(['login', ...srv], { env, input: `${user.email}\ncorrect horse battery\n` });
    expect(r.stderr).toContain('Email: ');
    expect(r.stderr).not.toContain('correct horse battery');
    expect(r.code).toBe(0);
    const file = path.join(home, '.config/chatgpu/credentials.json');
    expect(r.stdout).toContain(`Logged in to ${api.url} as ${user.email}; token saved in ${file}.`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved.servers[api.url].token).toMatch(/\S{20,}/);
    const jobs = await runCli(['jobs', '--json', ...srv], { env });
    expect(jobs.stderr).toBe('');
    expect(JSON.parse(jobs.stdout).totalCount).toBeGreaterThan(0);
  });
});

describe('chatgpu logs', () => {
  it('prints the seeded log lines of every attempt in order (paged), stderr prefixed; -f follows until the job ends', async () => {
    const small = path.join(tmp, 'logs-project');
    await writeTree(small, { 'run.py': 'print(1)\n' });
    const sub = await runCli(['submit', small, '-m', 'run it', '--json', ...srv], { env: withToken() });
    const gid: string = JSON.parse(sub.stdout).id;
    const jobId = rawId(gid);
    const cv = await prisma.codeVersion.findFirstOrThrow({ where: { jobId } });
    const worker = await seedWorker('logs-box');
    const task = await prisma.task.create({
      data: {
        jobId,
        ownerId: user.userId,
        kind: 'RUN',
        role: 'RUN',
        name: 'run',
        codeVersionId: cv.id,
        command: 'python run.py',
        status: 'RUNNING',
        attemptCount: 2,
      },
    });
    const lease = new Date(Date.now() + 60_000);
    const a1 = await prisma.attempt.create({
      data: { taskId: task.id, number: 1, workerId: worker.id, fencingToken: 'f1', leaseExpiresAt: lease, status: 'FAILED', exitCode: 1 },
    });
    const a2 = await prisma.attempt.create({
      data: { taskId: task.id, number: 2, workerId: worker.id, fencingToken: 'f2', leaseExpiresAt: lease, status: 'RUNNING' },
    });
    await prisma.logChunk.createMany({
      data: [
        { attemptId: a1.id, seq: 0, stream: 'stdout', text: 'first try' },
        { attemptId: a1.id, seq: 1, stream: 'stderr', text: 'Traceback: boom' },
        ...Array.from({ length: 95 }, (_, i) => ({ attemptId: a2.id, seq: i, stream: i === 50 ? 'stderr' : 'stdout', text: `line ${i}` })),
      ],
    });
    await prisma.job.update({ where: { id: jobId }, data: { status: 'RUNNING' } });

    const r = await runCli(['logs', gid, ...srv], { env: withToken() });
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('── run (RUN) · attempt 1 on logs-box ──');
    expect(lines.slice(1, 3)).toEqual(['first try', '[stderr] Traceback: boom']);
    expect(lines[3]).toBe('── run (RUN) · attempt 2 on logs-box ──');
    expect(lines.slice(4)).toEqual(Array.from({ length: 95 }, (_, i) => (i === 50 ? `[stderr] line ${i}` : `line ${i}`)));

    const f = startCli(['logs', gid, '-f', ...srv], { env: withToken() });
    await f.waitFor(/line 94\n/);
    await new Promise((res) => setTimeout(res, 1500)); // let the subscription start
    await prisma.logChunk.createMany({ data: [95, 96].map((seq) => ({ attemptId: a2.id, seq, stream: 'stdout', text: `live ${seq}` })) });
    await api.server.pubsub.emit({ type: 'job.logs', jobId, attemptId: a2.id, fromSeq: 95, toSeq: 96 });
    await f.waitFor(/live 96\n/);
    // A line stored without an event (e.g. while disconnected) still shows before the end.
    await prisma.logChunk.create({ data: { attemptId: a2.id, seq: 97, stream: 'stdout', text: 'quiet 97' } });
    await prisma.job.update({ where: { id: jobId }, data: { status: 'SUCCEEDED', statusReason: 'All checks passed.' } });
    await api.server.pubsub.emit({ type: 'job.updated', jobId });
    expect(await f.exited).toBe(0);
    expect(f.stdout()).toContain('line 94\nlive 95\nlive 96\nquiet 97\n');
    expect(f.stdout().match(/attempt 2 on logs-box/g)).toHaveLength(1);
    expect(f.stderr()).toContain('The job is SUCCEEDED: All checks passed.');
  });
});

describe('chatgpu submit --wait', () => {
  it('answers a question from stdin, follows to SUCCEEDED and downloads the outputs byte-identical', async () => {
    const proj = path.join(tmp, 'wait-project');
    await writeTree(proj, { 'train.py': 'print("a")\n', 'main.py': 'print("b")\n' });
    const out = path.join(tmp, 'out');
    const cli = startCli(['submit', proj, '-m', 'train it and give me the model', '--wait', '--out', out, ...srv], { env: withToken() });
    const m = await cli.waitFor(/Job (\S+) submitted/);
    const gid = m[1]!;
    const jobId = rawId(gid);
    await cli.waitFor(/● DRAFT\n/);

    // The planner asks which entry point (as the real one does: a Question row + a question.asked event).
    await prisma.job.update({ where: { id: jobId }, data: { status: 'NEEDS_INPUT', statusReason: 'Waiting for your answer.' } });
    const q = await prisma.question.create({ data: { jobId, text: 'Which entry point should I run?', choices: ['train.py', 'main.py'] } });
    await emitEvent(jobId, 'agent.run', { agent: 'planner', status: 'RUNNING', stopReason: null });
    await emitEvent(jobId, 'agent.item', { agent: 'planner', type: 'message', role: 'user', text: 'Job title: …' });
    await emitEvent(jobId, 'agent.item', {
      agent: 'planner',
      type: 'function_call',
      status: 'PENDING',
      callId: 'c1',
      name: 'list_files',
      arguments: '{"path":"."}',
    });
    await emitEvent(jobId, 'agent.item', {
      agent: 'planner',
      type: 'function_call_output',
      status: 'DONE',
      callId: 'c1',
      output: '["main.py","train.py"]',
    });
    await emitEvent(jobId, 'agent.item', {
      agent: 'planner',
      type: 'function_call',
      status: 'PENDING',
      callId: 'c2',
      name: 'ask_user',
      arguments: '{"question":"Which entry point should I run?","choices":["train.py","main.py"]}',
    });
    await emitEvent(jobId, 'job.status', { status: 'NEEDS_INPUT', reason: 'Waiting for your answer.' });
    await emitEvent(jobId, 'question.asked', { questionId: q.id, text: q.text, choices: q.choices });
    await api.server.pubsub.emit({ type: 'job.updated', jobId });

    await cli.waitFor(/\? Which entry point should I run\?\n\s+1\) train\.py\n\s+2\) main\.py/);
    cli.write('2\n');
    cli.endInput();
    const answered = await waitFor(
      async () => {
        const row = await prisma.question.findUniqueOrThrow({ where: { id: q.id } });
        return row.status === 'ANSWERED' ? row : null;
      },
      20_000,
      'the answer',
    );
    expect(answered.answer).toBe('main.py');
    await cli.waitFor(/✓ answered: main\.py/);

    // A plan, a RUN task that succeeded with an output blob, logs and a metric, then SUCCEEDED.
    const plan = await prisma.plan.create({
      data: {
        jobId,
        version: 1,
        author: 'builtin',
        summary: 'Run main.py on a CPU worker.',
        asks: [],
        steps: ['run main.py'],
        command: 'python main.py',
        environment: {},
        requirements: { workload: 'python', accelVendor: 'none' },
        outputs: ['model.pt'],
        acceptanceCriteria: [{ description: 'exit code 0' }, { description: 'model.pt exists' }],
      },
    });
    await prisma.job.update({
      where: { id: jobId },
      data: { status: 'RUNNING', currentPlanId: plan.id, acceptanceCriteria: plan.acceptanceCriteria as any },
    });
    await emitEvent(jobId, 'plan.created', { planId: plan.id, version: 1 });
    await emitEvent(jobId, 'job.status', { status: 'RUNNING' });
    await cli.waitFor(/◇ Plan v1 by builtin: Run main\.py on a CPU worker\.\n\s+command:\s+python main\.py/);

    const model = randomBytes(50_000);
    const put = await api.putBlob(model, user.token);
    expect(put.status).toBe(201);
    const outputs = [{ path: 'model.pt', sha256: put.sha256, size: model.length, mode: 0o644 }];
    const cv = await prisma.codeVersion.findFirstOrThrow({ where: { jobId } });
    const worker = await seedWorker('wait-box');
    const task = await prisma.task.create({
      data: {
        jobId,
        ownerId: user.userId,
        kind: 'RUN',
        role: 'RUN',
        name: 'train',
        codeVersionId: cv.id,
        command: 'python main.py',
        status: 'RUNNING',
        attemptCount: 1,
      },
    });
    await emitEvent(jobId, 'task.created', { taskId: task.id, name: 'train', kind: 'RUN' });
    const attempt = await prisma.attempt.create({
      data: {
        taskId: task.id,
        number: 1,
        workerId: worker.id,
        fencingToken: 'f',
        leaseExpiresAt: new Date(Date.now() + 60_000),
        status: 'RUNNING',
      },
    });
    await emitEvent(jobId, 'attempt.status', { taskId: task.id, attemptId: attempt.id, number: 1, status: 'RUNNING', worker: 'wait-box' });
    await prisma.logChunk.createMany({
      data: [
        { attemptId: attempt.id, seq: 0, stream: 'stdout', text: 'epoch 1 loss 0.5' },
        { attemptId: attempt.id, seq: 1, stream: 'stderr', text: 'a warning' },
      ],
    });
    await api.server.pubsub.emit({ type: 'job.logs', jobId, attemptId: attempt.id, fromSeq: 0, toSeq: 1 });
    await prisma.metricPoint.create({ data: { attemptId: attempt.id, seq: 0, name: 'loss', step: 1, value: 0.5 } });
    await api.server.pubsub.emit({ type: 'job.metrics', jobId, attemptId: attempt.id, fromSeq: 0, toSeq: 0 });
    await cli.waitFor(/\| \[stderr\] a warning/);
    // One compact progress line per batch of metric points, naming the task (api/src/cli/progress.ts).
    await cli.waitFor(/∿ train · step 1: loss=0\.5/);

    await prisma.attempt.update({ where: { id: attempt.id }, data: { status: 'SUCCEEDED', exitCode: 0, outputs, finishedAt: new Date() } });
    await prisma.task.update({
      where: { id: task.id },
      data: {
        status: 'SUCCEEDED',
        finishedAt: new Date(),
        result: { attemptId: attempt.id, exitCode: 0, outputs, metrics: { loss: 0.25 } },
      },
    });
    await emitEvent(jobId, 'validation', { passed: true, checks: [{ name: 'model.pt exists', passed: true }] });
    await prisma.job.update({
      where: { id: jobId },
      data: { status: 'SUCCEEDED', statusReason: 'The model was trained and every check passed.', finishedAt: new Date() },
    });
    await emitEvent(jobId, 'job.status', { status: 'SUCCEEDED', reason: 'The model was trained and every check passed.' });
    await api.server.pubsub.emit({ type: 'job.updated', jobId });

    const code = await cli.exited;
    const text = cli.output();
    if (process.env.CLI_TEST_PRINT) console.log(text);
    expect(code, text).toBe(0);
    expect(text).toContain('◆ planner started');
    expect(text).not.toContain('Job title');
    expect(text).toContain('◆ planner → list_files(path=".")');
    expect(text).toContain('◆ planner → ask_user(question="Which entry point should I run?", choices=["train.py","main.py"])');
    expect(text).toContain('◆ planner ← list_files: ["main.py","train.py"]');
    expect(text).toContain('● NEEDS_INPUT — Waiting for your answer.');
    expect(text).toContain('acceptance criteria:\n      - exit code 0\n      - model.pt exists');
    expect(text).toContain('── train (RUN) · attempt 1 on wait-box ──\n  | epoch 1 loss 0.5\n  | [stderr] a warning');
    expect(text).toContain('✔ validation: passed: model.pt exists ✓');
    expect(text).toContain('Job SUCCEEDED: The model was trained and every check passed.');

    const got = await readFile(path.join(out, 'model.pt'));
    expect(got.equals(model)).toBe(true);
    const summary = JSON.parse(await readFile(path.join(out, 'job.json'), 'utf8'));
    expect(summary).toMatchObject({
      id: gid,
      status: 'SUCCEEDED',
      statusReason: 'The model was trained and every check passed.',
      plan: { command: 'python main.py', version: 1 },
      acceptanceCriteria: [{ description: 'exit code 0' }, { description: 'model.pt exists' }],
      metrics: { train: { loss: 0.25 } },
      validation: [{ passed: true }],
      outputs: [{ path: 'model.pt', sha256: put.sha256 }],
    });
  });

  it('exits 1 when the job ends other than SUCCEEDED (cancelled from elsewhere)', async () => {
    const proj = path.join(tmp, 'cancel-project');
    await writeTree(proj, { 'x.py': 'print(1)\n' });
    const cli = startCli(['submit', proj, '-m', 'run', '--wait', ...srv], { env: withToken() });
    const m = await cli.waitFor(/Job (\S+) submitted/);
    await cli.waitFor(/● DRAFT\n/);
    const c = await runCli(['cancel', m[1]!, ...srv], { env: withToken() });
    expect(c.code).toBe(0);
    expect(await cli.exited).toBe(1);
    expect(cli.output()).toContain('Job CANCELLED: Cancelled by its owner.');
  });
});

describe('chatgpu submit --wait with the real builtin planner', () => {
  it('the planner asks which entry point; the answer typed at the prompt resumes planning from its saved history', async () => {
    const live = await startTestApi({}, { model: createBuiltinClient() });
    const me = await live.signUp();
    // One online CPU worker that runs plain Python (the planner plans for the network it sees).
    await live.gql(`mutation { createWorkerToken(input: {name: "cpu"}) { __typename } }`, {}, me.token);
    const wt = await live.server.db.prisma.workerToken.findFirstOrThrow({ where: { userId: me.userId } });
    await live.server.db.prisma.worker.create({
      data: {
        ownerId: me.userId,
        tokenId: wt.id,
        name: 'cpu-box',
        status: 'ONLINE',
        workloads: ['python'],
        cpuCores: 4,
        memoryMiB: 8192,
        capabilities: { pythons: [{ path: '/usr/bin/python3', version: '3.11.2' }], python: '/usr/bin/python3' },
      },
    });
    const proj = path.join(tmp, 'two-entry-points');
    await writeTree(proj, {
      'train.py': 'if __name__ == "__main__":\n    print("train")\n',
      'simulate.py': 'if __name__ == "__main__":\n    print("simulate")\n',
    });
    const cli = startCli(['submit', proj, '-m', 'run it', '--wait', '--server', live.url], { env: withToken(me.token) });
    const m = await cli.waitFor(/Job (\S+) submitted/);
    const q = await cli.waitFor(/\? (Which script should run\?[^\n]*)\n\s+1\) (\S+)\n\s+2\) (\S+)\n/, 30_000);
    cli.write('2\n');
    await cli.waitFor(new RegExp(`✓ answered: ${q[3]!.replace(/[.]/g, '\\.')}`));
    const row = await live.server.db.prisma.question.findFirstOrThrow({ where: { jobId: rawId(m[1]!) } });
    expect(row).toMatchObject({ status: 'ANSWERED', answer: q[3] });
    await cli.waitFor(new RegExp(`◇ Plan v1 by builtin: [^\\n]*\\n\\s+command:\\s+python3? ${q[3]!.replace(/[.]/g, '\\.')}`), 30_000);
    const c = await runCli(['cancel', m[1]!, '--server', live.url], { env: withToken(me.token) });
    expect(c.code).toBe(0);
    expect(await cli.exited).toBe(1);
    if (process.env.CLI_TEST_PRINT) console.log(cli.output());
  });
});
