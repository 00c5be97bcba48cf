/**
 * The main job end to end with the builtin model (no API key): real API, real
 * PostgreSQL, a real worker process running real PyTorch.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi } from './helpers/api.js';
import { repoRoot } from './helpers/processes.js';
import { startWorker } from './helpers/worker.js';

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
await startWorker(api.url, wt.data.createWorkerToken.token, 'cpu-box');

const JOB = `query($id: ID!) { job(id: $id) { status statusReason currentPlan { command requirements acceptanceCriteria author }
  openQuestions { id text choices } outputs { path sha256 size }
  tasks { kind status statusReason } events(first: 2000) { kind payload } } }`;

async function submit(files: Record<string, string>, request: string) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } } }`,
    { i: { title: 'job', request, files: manifest } },
    user.token,
  );
  return r.data.createJob.id as string;
}

function dirFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir)) if (statSync(path.join(dir, f)).isFile()) out[f] = readFileSync(path.join(dir, f), 'utf8');
  return out;
}

async function until(id: string, pred: (job: any) => boolean, timeoutMs = 90_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const job = (await api.gql(JOB, { id }, user.token)).data.job;
    if (pred(job)) return job;
    if (Date.now() > end)
      throw new Error(`timed out; job: ${JSON.stringify({ status: job.status, reason: job.statusReason, tasks: job.tasks })}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('the main job, builtin planner', () => {
  it('trains the example for 2 epochs, reloads and evaluates the checkpoint, and offers the model', async () => {
    const id = await submit(dirFiles(path.join(repoRoot, 'examples/torch-classifier')), 'train it for 2 epochs and give me the model');
    const job = await until(id, (j) => ['SUCCEEDED', 'FAILED'].includes(j.status), 120_000);
    expect(job.status, job.statusReason).toBe('SUCCEEDED');
    expect(job.currentPlan.author).toBe('builtin');
    expect(job.currentPlan.command).toBe('python train.py --epochs 2 --device "$CHATGPU_DEVICE" --save outputs/model.pt');
    expect(job.currentPlan.acceptanceCriteria.evaluate.command).toBe('python evaluate.py --checkpoint outputs/model.pt');
    expect(job.currentPlan.acceptanceCriteria.evaluate.reports).toEqual(['eval_accuracy']);
    expect(job.tasks.map((t: any) => [t.kind, t.status])).toEqual([
      ['RUN', 'SUCCEEDED'],
      ['EVALUATE', 'SUCCEEDED'],
    ]);
    const accepted = job.events.find((e: any) => e.kind === 'job.status' && e.payload.transition === 'acceptPlan');
    expect(accepted?.payload.reason).toMatch(/^No preparation needed: the code fits a torch-cpu worker as it is/);
    expect(job.outputs.map((o: any) => o.path)).toContain('outputs/model.pt');
    const kinds = new Set(job.events.map((e: any) => e.kind));
    for (const k of ['job.created', 'agent.run', 'agent.item', 'plan.created', 'task.created', 'attempt.status', 'validation'])
      expect(kinds).toContain(k);
    const calls = job.events
      .filter((e: any) => e.kind === 'agent.item' && e.payload.type === 'function_call')
      .map((e: any) => e.payload.name);
    expect(calls).toEqual(
      expect.arrayContaining(['list_files', 'find_dependencies', 'network_capacity', 'read_file', 'consult_specialist', 'submit_plan']),
    );
    const evaluation = job.events.find((e: any) => e.kind === 'validation' && e.payload.step === 'evaluate');
    expect(evaluation.payload.metrics.eval_accuracy).toBeGreaterThan(0.5);
    const model = await api.getBlob(job.outputs.find((o: any) => o.path === 'outputs/model.pt').sha256, user.token);
    expect(model.status).toBe(200);
    expect(model.bytes.length).toBeGreaterThan(1000);
    expect(job.statusReason).toMatch(/reloaded and evaluated/);

    // All outputs as one archive, for the owner only.
    const res = await fetch(`${api.url}/jobs/${encodeURIComponent(id)}/outputs.tar.gz`, {
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(res.status).toBe(200);
    const dir = mkdtempSync(path.join(tmpdir(), 'outs-'));
    writeFileSync(path.join(dir, 'o.tgz'), Buffer.from(await res.arrayBuffer()));
    execFileSync('tar', ['-xzf', 'o.tgz'], { cwd: dir });
    expect(readFileSync(path.join(dir, 'outputs/model.pt')).equals(model.bytes)).toBe(true);
    const stranger = await api.signUp();
    expect(
      (await fetch(`${api.url}/jobs/${encodeURIComponent(id)}/outputs.tar.gz`, { headers: { authorization: `Bearer ${stranger.token}` } }))
        .status,
    ).toBe(404);

    // The network as the dashboard sees it, and one attempt's logs by id.
    const net = await api.gql(`{ networkCapacity { accelVendor count workloads torchVersions } }`, {}, user.token);
    expect(net.data.networkCapacity).toEqual([
      expect.objectContaining({ accelVendor: 'none', count: 1, workloads: expect.arrayContaining(['torch-cpu']) }),
    ]);
    const jobId = Buffer.from(id, 'base64').toString().split(':')[1]!;
    const attempt = await api.server.db.prisma.attempt.findFirstOrThrow({ where: { task: { jobId, kind: 'RUN' } } });
    const logs = await api.gql(
      `query($id: ID!) { attempt(id: $id) { status logs(first: 5000) { text } } }`,
      { id: attempt.id },
      user.token,
    );
    expect(logs.data.attempt.logs.some((l: any) => /^epoch 2\/2: loss [\d.]+ accuracy [\d.]+$/.test(l.text))).toBe(true);
    expect((await api.gql(`query($id: ID!) { attempt(id: $id) { status } }`, { id: attempt.id }, stranger.token)).data.attempt).toBeNull();
  });

  it(
    'fails a job whose evaluation misses the threshold the user named; its outputs stay downloadable, marked not validated',
    { timeout: 120_000 },
    async () => {
      const id = await submit(
        dirFiles(path.join(repoRoot, 'examples/torch-classifier')),
        'train it for 1 epoch and give me the model; I need accuracy above 0.999',
      );
      const job = await until(id, (j) => ['SUCCEEDED', 'FAILED'].includes(j.status), 110_000);
      expect(job.status, job.statusReason).toBe('FAILED');
      // The threshold is on the evaluation of the final checkpoint (what evaluate.py reports), not on training.
      expect(job.currentPlan.acceptanceCriteria.evaluate.metrics).toEqual([{ name: 'eval_accuracy', op: '>', value: 0.999 }]);
      expect(job.currentPlan.acceptanceCriteria.metrics).toEqual([]);
      expect(job.tasks.map((t: any) => [t.kind, t.status])).toEqual([
        ['RUN', 'SUCCEEDED'],
        ['EVALUATE', 'SUCCEEDED'],
      ]);
      expect(job.statusReason).toMatch(/evaluation missed the criteria: eval_accuracy was 0\.\d+, the criterion is > 0\.999/);
      const more = (await api.gql(`query($id: ID!) { job(id: $id) { outputsValidated outputs { path } } }`, { id }, user.token)).data.job;
      expect(more.outputsValidated).toBe(false);
      expect(more.outputs.map((o: any) => o.path)).toContain('outputs/model.pt');
    },
  );

  it('runs the dependency-free simulation example: its results file is required, not mistaken for a checkpoint', async () => {
    const id = await submit(dirFiles(path.join(repoRoot, 'examples/simulation')), 'run the simulation with 50000 samples');
    const job = await until(id, (j) => ['SUCCEEDED', 'FAILED'].includes(j.status));
    expect(job.status, job.statusReason).toBe('SUCCEEDED');
    expect(job.currentPlan.command).toBe('python simulate.py --samples 50000 --out outputs/results.json');
    expect(job.currentPlan.requirements.workload).toBe('python');
    expect(job.currentPlan.acceptanceCriteria.requiredFiles).toEqual(['outputs/results.json']);
    expect(job.currentPlan.acceptanceCriteria.evaluate ?? null).toBeNull();
    const results = JSON.parse(
      (await api.getBlob(job.outputs.find((o: any) => o.path === 'outputs/results.json').sha256, user.token)).bytes.toString(),
    );
    expect(results.samples).toBe(50000);
    expect(Math.abs(results.pi - Math.PI)).toBeLessThan(0.05);
  });

  it('asks which of two entry points to run, and resumes planning from its saved history when answered', async () => {
    const id = await submit(
      {
        'main.py': 'if __name__ == "__main__":\n    print("main")\n',
        'train.py': 'import os\nif __name__ == "__main__":\n    open("outputs/done.txt", "w").write("trained")\n    print("trained")\n',
      },
      'run the project',
    );
    const waiting = await until(id, (j) => j.status === 'NEEDS_INPUT');
    const q = waiting.openQuestions[0];
    expect(q.text).toMatch(/Which script should run/);
    expect(q.choices).toEqual(['main.py', 'train.py']);
    const runsBefore = await api.server.db.prisma.agentRun.count({
      where: { agent: 'planner', job: { id: Buffer.from(id, 'base64').toString().split(':')[1]! } },
    });
    const ans = await api.gql(
      `mutation($i: AnswerQuestionInput!) { answerQuestion(input: $i) { __typename ... on Question { status answer } } }`,
      { i: { questionId: q.id, answer: 'train.py' } },
      user.token,
    );
    expect(ans.data.answerQuestion).toMatchObject({ __typename: 'Question', status: 'ANSWERED' });
    const done = await until(id, (j) => ['SUCCEEDED', 'FAILED'].includes(j.status));
    expect(done.status, done.statusReason).toBe('SUCCEEDED');
    expect(done.currentPlan.command).toBe('python train.py');
    // The same planner run continued (its history holds the question and the answer).
    const jobId = Buffer.from(id, 'base64').toString().split(':')[1]!;
    expect(await api.server.db.prisma.agentRun.count({ where: { agent: 'planner', jobId } })).toBe(runsBefore);
    const run = await api.server.db.prisma.agentRun.findFirstOrThrow({ where: { agent: 'planner', jobId } });
    const items = await api.server.db.prisma.agentItem.findMany({ where: { runId: run.id }, orderBy: { seq: 'asc' } });
    expect(items.some((i) => i.type === 'message' && JSON.stringify(i.payload).includes('train.py'))).toBe(true);
  });

  it('names an unsatisfiable pin and the workers’ versions, asks, and stops with that sentence when told to', async () => {
    const id = await submit(
      {
        'requirements.txt': 'torch==2.3.0\nnumpy\n',
        'train.py': 'import torch\nif __name__ == "__main__":\n    print(torch.__version__)\n',
      },
      'train it',
    );
    const waiting = await until(id, (j) => j.status === 'NEEDS_INPUT');
    const q = waiting.openQuestions[0];
    expect(q.text).toMatch(/requirements\.txt pins torch==2\.3\.0, but the online workers have torch 1\.13/);
    await api.gql(
      `mutation($i: AnswerQuestionInput!) { answerQuestion(input: $i) { __typename } }`,
      { i: { questionId: q.id, answer: 'Stop the job' } },
      user.token,
    );
    const done = await until(id, (j) => j.status === 'FAILED');
    expect(done.statusReason).toMatch(/pins torch==2\.3\.0, but the online workers have torch 1\.13.*Stopped at your request/);
    expect(done.tasks).toEqual([]);
  });

  it('runs with the workers’ versions when told to, after naming an unsatisfiable pin', async () => {
    const id = await submit(
      {
        'requirements.txt': 'torch>=2.1\n',
        'train.py': 'import torch\nif __name__ == "__main__":\n    print("torch", torch.__version__)\n',
      },
      'train it',
    );
    const waiting = await until(id, (j) => j.status === 'NEEDS_INPUT');
    const q = waiting.openQuestions[0];
    expect(q.choices).toEqual(["Run with the workers' versions", 'Stop the job']);
    await api.gql(
      `mutation($i: AnswerQuestionInput!) { answerQuestion(input: $i) { __typename } }`,
      { i: { questionId: q.id, answer: q.choices[0] } },
      user.token,
    );
    const done = await until(id, (j) => ['SUCCEEDED', 'FAILED'].includes(j.status));
    expect(done.status, done.statusReason).toBe('SUCCEEDED');
    expect(done.tasks.map((t: any) => [t.kind, t.status])).toEqual([['RUN', 'SUCCEEDED']]);
  });

  it(
    'a torch pin newer than the workers’ with calls the workers’ torch lacks: offers the migration (not “run anyway”), and the migrated code runs, checked by the preparation stage',
    { timeout: 150_000 },
    async () => {
      const train = [
        'import json',
        'import torch',
        'import torch.nn.functional as F',
        'torch.manual_seed(0)',
        'model = torch.compile(torch.nn.Linear(8, 8))',
        'q = model(torch.randn(1, 2, 4, 8))',
        'y = F.scaled_dot_product_attention(q, q, q, is_causal=True)',
        'json.dump({"sum": round(float(y.sum()), 5)}, open("outputs/result.json", "w"))',
        '',
      ].join('\n');
      const id = await submit({ 'requirements.txt': 'torch>=2.1\n', 'train.py': train }, 'train it');
      const waiting = await until(id, (j) => j.status === 'NEEDS_INPUT');
      const q = waiting.openQuestions[0];
      expect(q.text).toMatch(
        /requirements\.txt pins torch>=2\.1, but the online workers have torch 1\.13.*2 PyTorch call\(s\) newer than the workers' torch 1\.13[\d.a-z]*, each rewritten by the pytorch-version-compat migration: train\.py:5 torch\.compile \(≥ 2\.0\); train\.py:7 torch\.nn\.functional\.scaled_dot_product_attention \(≥ 2\.0\)/,
      );
      // Running the unchanged code would crash at the first call: not offered.
      expect(q.choices).toEqual([
        expect.stringMatching(/^Migrate those calls to torch 1\.13[\d.a-z]* \(checked by a bounded run first\)$/),
        'Stop the job',
      ]);
      await api.gql(
        `mutation($i: AnswerQuestionInput!) { answerQuestion(input: $i) { __typename } }`,
        { i: { questionId: q.id, answer: q.choices[0] } },
        user.token,
      );
      const done = await until(id, (j) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(j.status), 140_000);
      expect(done.status, done.statusReason).toBe('SUCCEEDED');
      expect(done.tasks.map((t: any) => [t.kind, t.status])).toEqual([
        ['REFERENCE', 'SUCCEEDED'],
        ['CANDIDATE', 'SUCCEEDED'],
        ['RUN', 'SUCCEEDED'],
      ]);
      const jobId = Buffer.from(id, 'base64').toString().split(':')[1]!;
      const records = await api.server.db.prisma.preparationRecord.findMany({
        where: { jobId },
        orderBy: { createdAt: 'asc' },
        select: { step: true, outcome: true, transformation: true, reason: true },
      });
      expect(records.map((x) => [x.step, x.outcome, x.transformation])).toEqual([
        ['reference', 'FALLBACK', 'pytorch-version-compat'],
        ['migrate', 'ACCEPTED', 'pytorch-version-compat'],
      ]);
      expect(records[0]!.reason).toMatch(
        /^The unchanged code calls PyTorch newer than the online workers' \(train\.py:5 torch\.compile needs PyTorch ≥ 2\.0; train\.py:7 torch\.nn\.functional\.scaled_dot_product_attention needs PyTorch ≥ 2\.0\)/,
      );
      // The run ran the rewrite: the frozen code calls the helpers, and the result is there.
      const run = await api.server.db.prisma.task.findFirstOrThrow({
        where: { jobId, kind: 'RUN' },
        select: { codeVersion: { select: { status: true, origin: true } } },
      });
      expect(run.codeVersion).toEqual({ status: 'ACCEPTED', origin: 'pytorch-version-compat' });
      expect(done.outputs.map((o: any) => o.path)).toContain('outputs/result.json');
    },
  );

  it('a torch pin newer than the workers’ with a call no rewrite replaces: stopped before anything runs, naming the call and the torch it needs; nothing asked', async () => {
    const id = await submit(
      {
        'requirements.txt': 'torch>=2.2\n',
        'train.py': 'import torch\nprogram = torch.export.export(torch.nn.Linear(2, 2), (torch.randn(1, 2),))\nprint(program)\n',
      },
      'train it',
    );
    const done = await until(id, (j) => ['FAILED', 'NEEDS_INPUT', 'SUCCEEDED'].includes(j.status));
    expect(done.status).toBe('FAILED');
    expect(done.statusReason).toMatch(
      /requirements\.txt pins torch>=2\.2, but the online workers have torch 1\.13[\d.a-z]*\. 1 PyTorch call\(s\) newer than the workers' torch 1\.13[\d.a-z]* have no rewrite: train\.py:2 torch\.export\.export \(≥ 2\.1\)\. A worker with torch ≥ 2\.1 is needed\.$/,
    );
    expect(done.tasks).toEqual([]);
    expect(done.openQuestions).toEqual([]);
  });

  it('migrates code hard-wired to CUDA instead of failing at run time when no NVIDIA worker is online', { timeout: 150_000 }, async () => {
    const id = await submit(
      { 'train.py': 'import torch\nif __name__ == "__main__":\n    x = torch.zeros(3).cuda()\n    print(float(x.sum()))\n' },
      'train',
    );
    const done = await until(id, (j) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(j.status), 140_000);
    expect(done.status, done.statusReason).toBe('SUCCEEDED');
    const planned = done.events.find((e: any) => e.kind === 'job.status' && e.payload.transition === 'startPreparation');
    expect(planned?.payload.reason).toMatch(/reference run, then migrate \(pytorch-device-agnostic, required\)/);
    expect(done.tasks.map((t: any) => [t.kind, t.status])).toEqual([
      ['REFERENCE', 'SUCCEEDED'],
      ['CANDIDATE', 'SUCCEEDED'],
      ['RUN', 'SUCCEEDED'],
    ]);
  });
});
