/**
 * Projects written the way public examples are (api/test/fixtures/projects/), submitted with
 * the real `chatgpu submit DIR -m "…" --wait` (answers to the planner's questions typed at its
 * prompt), planned by the builtin planner and run end to end on a real worker: the test
 * asserts the exact command the planner chose, then SUCCEEDED with the checkpoint.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi } from './helpers/api.js';
import { runCli } from './helpers/cli.js';
import { startWorker } from './helpers/worker.js';

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
await startWorker(api.url, wt.data.createWorkerToken.token, 'cpu-box');

const JOB = `query($id: ID!) { job(id: $id) { status statusReason currentPlan { command acceptanceCriteria pipeline smokeRun } openQuestions { id text choices }
  outputs { path } tasks { name kind status } events(first: 2000) { kind payload } } }`;

function projectFiles(name: string): Record<string, string> {
  const root = path.join(import.meta.dirname, 'fixtures/projects', name);
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const f of readdirSync(dir)) {
      const p = path.join(dir, f);
      if (statSync(p).isDirectory()) walk(p);
      else out[path.relative(root, p)] = readFileSync(p, 'utf8');
    }
  };
  walk(root);
  return out;
}

const home = mkdtempSync(path.join(tmpdir(), 'cli-home-'));
const cliEnv = {
  HOME: home,
  XDG_CONFIG_HOME: path.join(home, '.config'),
  CHATGPU_DATA_DIR: path.join(home, 'no-data'),
  CHATGPU_TOKEN: user.token,
};

/** `chatgpu submit fixtures/projects/NAME -m REQUEST --wait`, answering at the prompt; then the job as the API has it. */
async function submitWait(project: string, request: string, answers: string[] = []) {
  const dir = path.join(import.meta.dirname, 'fixtures/projects', project);
  const r = await runCli(['submit', dir, '-m', request, '--wait', '--json', '--server', api.url], {
    env: cliEnv,
    input: answers.map((a) => `${a}\n`).join(''),
    timeoutMs: 140_000,
  });
  const summary = JSON.parse(r.stdout.trim().split('\n').pop()!) as { id?: string; jobId?: string; status: string };
  const row = await api.server.db.prisma.job.findFirstOrThrow({ where: { title: project }, orderBy: { createdAt: 'desc' } });
  const id = Buffer.from(`Job:${row.id}`).toString('base64');
  const job = (await api.gql(JOB, { id }, user.token)).data.job;
  return { ...job, id, jobId: row.id, exitCode: r.code, summary, stderr: r.stderr };
}

describe('projects as their authors wrote them', () => {
  it(
    'a top-level training script (no __main__ block) with --cuda/--mps switches, next to a generate script that reads --checkpoint: "train" picks the training script, the flags the user wrote win, no switch gets a value',
    { timeout: 150_000 },
    async () => {
      const job = await submitWait('word-lm', 'train it for 1 epoch with --emsize 16 and give me the model');
      expect(job.exitCode, job.stderr).toBe(0);
      expect(job.stderr).not.toMatch(/Which script should run/);
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      // CPU worker: neither --cuda nor --mps; --save into outputs/; --dry-run untouched.
      expect(job.currentPlan.command).toBe('python main.py --emsize 16 --epochs 1 --save outputs/model.pt');
      expect(job.currentPlan.acceptanceCriteria.evaluate).toMatchObject({
        checkpoint: 'outputs/model.pt',
        command: 'python -m chatgpu.reload_check outputs/model.pt',
        reports: ['reload_ok'],
      });
      expect(job.tasks.map((t: any) => [t.kind, t.status])).toEqual([
        ['RUN', 'SUCCEEDED'],
        ['EVALUATE', 'SUCCEEDED'],
      ]);
      expect(job.outputs.map((o: any) => o.path)).toContain('outputs/model.pt');
    },
  );

  it(
    'store_true switches are passed, never given a value: --no-cuda/--no-mps on a CPU worker, --save-model when the model is asked for',
    { timeout: 150_000 },
    async () => {
      const job = await submitWait('mnist-like', 'train for 1 epoch and give me the model');
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      expect(job.currentPlan.command).toBe('python main.py --epochs 1 --no-cuda --no-mps --save-model');
      expect(job.currentPlan.acceptanceCriteria.evaluate).toMatchObject({
        checkpoint: 'mnist_cnn.pt',
        command: 'python -m chatgpu.reload_check mnist_cnn.pt',
      });
      expect(job.outputs.map((o: any) => o.path)).toContain('mnist_cnn.pt');
    },
  );

  it(
    'a pipeline: the data-preparation script runs first as its own step and hands its products to the run (no re-upload)',
    { timeout: 150_000 },
    async () => {
      const job = await submitWait('prepare-train', 'prepare the data and train it for 20 epochs, then give me the model');
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      expect(job.currentPlan.command).toBe('python train.py --epochs 20 --out outputs/model.pt');
      // 20 epochs: a smoke run of 2 comes between the data step and the full run (it needs the data too).
      expect(job.tasks.map((t: any) => [t.name, t.status])).toEqual([
        ['step:prepare-data', 'SUCCEEDED'],
        ['smoke', 'SUCCEEDED'],
        ['run', 'SUCCEEDED'],
        ['evaluate', 'SUCCEEDED'],
      ]);
      const step = job.events.find((e: any) => e.kind === 'pipeline.step');
      expect(step.payload).toMatchObject({ step: 'prepare-data', ok: true, next: 'smoke' });
      expect(step.payload.produced.sort()).toEqual(['data/tiny/meta.json', 'data/tiny/train.npy']);
      const planned = job.events.find((e: any) => e.kind === 'job.status' && e.payload.transition === 'acceptPlan');
      expect(planned.payload.reason).toMatch(
        /running prepare-data, a smoke run of the bounded workload on the same hardware, then the main run/,
      );
      // The run got the step's files as inputs, by hash (the same blobs, not re-uploaded).
      const tasks = await api.server.db.prisma.task.findMany({ where: { jobId: job.jobId }, orderBy: { createdAt: 'asc' } });
      // (prepare.py itself is collected with its folder but is no artifact: the code already holds it.)
      const stepOutputs = (tasks[0]!.result as any).outputs
        .filter((o: any) => step.payload.produced.includes(o.path))
        .map((o: any) => [o.path, o.sha256])
        .sort();
      expect(stepOutputs).toHaveLength(2);
      expect((tasks[1]!.environment as any).inputs.map((o: any) => [o.path, o.sha256]).sort()).toEqual(stepOutputs);
      expect((tasks[2]!.environment as any).inputs.map((o: any) => [o.path, o.sha256]).sort()).toEqual(stepOutputs);
      expect(tasks[1]!.command).toBe('python train.py --epochs 2 --out outputs/model.pt');
      expect(tasks[2]!.command).toBe('python train.py --epochs 20 --out outputs/model.pt');
      expect(tasks[0]!.command).toBe('cd data/tiny && python prepare.py');
    },
  );

  it('a pipeline step that fails fails the job, naming the step; the run never starts', { timeout: 120_000 }, async () => {
    const files = projectFiles('prepare-train');
    files['data/tiny/prepare.py'] = files['data/tiny/prepare.py']!.replace(
      'np.save(',
      'raise SystemExit("no disk for " + "train.npy")\nnp.save(',
    );
    const manifest = [];
    for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
    const r = await api.gql(
      `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } } }`,
      { i: { title: 'broken prepare', request: 'prepare the data and train it for 2 epochs', files: manifest } },
      user.token,
    );
    const id = r.data.createJob.id as string;
    let job: any;
    for (const end = Date.now() + 100_000; Date.now() < end; await new Promise((res) => setTimeout(res, 250))) {
      job = (await api.gql(JOB, { id }, user.token)).data.job;
      if (['SUCCEEDED', 'FAILED'].includes(job.status)) break;
    }
    expect(job.status).toBe('FAILED');
    expect(job.statusReason).toMatch(/^The pipeline step "prepare-data" failed: .*no disk for train\.npy/);
    expect(job.tasks.map((t: any) => t.name)).toEqual(['step:prepare-data']);
  });

  it(
    'a nanoGPT-style project (configurator: config files and --key=value): asks which configuration, prepares its dataset first, and passes settings the way the program takes them',
    { timeout: 150_000 },
    async () => {
      // The planner asks which configuration; the answer is typed at the prompt (choice 2).
      const job = await submitWait('tiny-gpt', 'train it for 50 iterations and give me the checkpoint', ['2']);
      expect(job.stderr).toMatch(/Which configuration should train\.py run with\?/);
      expect(job.stderr).toMatch(/config\/train_big_corpus\.py[\s\S]*config\/train_tiny_char\.py[\s\S]*train\.py's own defaults/);
      expect(job.exitCode, job.stderr).toBe(0);
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      // The config file first, then overrides: the worker's device, torch.compile off on PyTorch 1.x,
      // the run length the user asked for, an eval interval no longer than the run (or no checkpoint
      // is written), out_dir in outputs/. The config's dataset (tiny_char) is prepared first; the
      // other data set (big_corpus, which would download) is not.
      expect(job.currentPlan.command).toBe(
        'python train.py config/train_tiny_char.py --out_dir=outputs/out-tiny-char --eval_interval=50 --max_iters=50 --device="$CHATGPU_DEVICE" --compile=False',
      );
      expect(job.currentPlan.pipeline).toEqual([
        {
          name: 'prepare-data',
          command: 'cd data/tiny_char && python prepare.py',
          produces: ['data/tiny_char'],
          // Its prepare.py downloads when input.txt is missing: a data download, the one step with the network (docs/data-downloads.md).
          network: 'download',
          urls: ['https://example.invalid/tiny.txt'],
        },
      ]);
      expect(job.currentPlan.acceptanceCriteria.evaluate).toMatchObject({ checkpoint: 'outputs/out-tiny-char/ckpt.pt' });
      // 50 iterations: a smoke run of 20 first (the configurator's own --key=value form).
      expect(job.currentPlan.smokeRun.command).toBe(
        'python train.py config/train_tiny_char.py --out_dir=outputs/out-tiny-char --eval_interval=50 --max_iters=20 --device="$CHATGPU_DEVICE" --compile=False',
      );
      expect(job.tasks.map((t: any) => [t.name, t.status])).toEqual([
        ['step:prepare-data', 'SUCCEEDED'],
        ['smoke', 'SUCCEEDED'],
        ['run', 'SUCCEEDED'],
        ['evaluate', 'SUCCEEDED'],
      ]);
      expect(job.outputs.map((o: any) => o.path)).toContain('outputs/out-tiny-char/ckpt.pt');
    },
  );

  it(
    'the README says how to run it: of two scripts, the one its Usage names, run as a module (`python -m`) so the package imports',
    { timeout: 150_000 },
    async () => {
      const job = await submitWait('readme-module', 'train for 2 epochs and give me the model');
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      expect(job.currentPlan.command).toBe('python -m lmtool.train --epochs 2 --out outputs/model.pt');
      expect(job.openQuestions).toEqual([]);
      // The generic reload check rebuilds the package's model class from the state_dict.
      expect(job.currentPlan.acceptanceCriteria.evaluate.command).toBe('python -m chatgpu.reload_check outputs/model.pt');
      expect(job.tasks.map((t: any) => [t.kind, t.status])).toEqual([
        ['RUN', 'SUCCEEDED'],
        ['EVALUATE', 'SUCCEEDED'],
      ]);
      const evaluated = job.events.find((e: any) => e.kind === 'validation' && e.payload.step === 'evaluate');
      expect(evaluated.payload.metrics).toMatchObject({ reload_ok: 1, rebuilt: 1, forward_ok: 1 });
    },
  );

  it(
    'a README that runs a data generator, then the training script (after pytorch/examples time_sequence_prediction): the generator is a step before the run, whatever its name',
    { timeout: 150_000 },
    async () => {
      const job = await submitWait('sine-wave', 'run it for 2 steps and give me the predictions');
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      expect(job.openQuestions).toEqual([]);
      expect(job.currentPlan.command).toBe('python train.py --steps 2');
      expect(job.currentPlan.pipeline).toEqual([
        { name: 'prepare-data', command: 'python generate_sine_wave.py', produces: ['traindata.pt'] },
      ]);
      expect(job.tasks.map((t: any) => [t.name, t.status])).toEqual([
        ['step:prepare-data', 'SUCCEEDED'],
        ['run', 'SUCCEEDED'],
      ]);
      // What train.py writes beside itself (np.save('predict%d.npy' % i, y)) is collected: a glob the worker expands.
      expect(job.outputs.map((o: any) => o.path).sort()).toEqual(['predict0.npy', 'predict1.npy', 'traindata.pt']);
    },
  );

  it(
    'click and typer CLIs: options read from their decorators and signatures, a choice-typed device set from the worker',
    { timeout: 150_000 },
    async () => {
      const clickJob = await submitWait('click-cli', 'fit it for 2 epochs and give me the model');
      expect(clickJob.exitCode, clickJob.stderr).toBe(0);
      expect(clickJob.currentPlan.command).toBe('python fit.py --epochs 2 --out outputs/line.pt --device "$CHATGPU_DEVICE"');
      expect(clickJob.outputs.map((o: any) => o.path)).toContain('outputs/line.pt');
      const typerJob = await submitWait('typer-cli', 'train for 2 epochs and give me the model');
      expect(typerJob.exitCode, typerJob.stderr).toBe(0);
      expect(typerJob.currentPlan.command).toBe('python train.py --epochs 2 --save outputs/model.pt');
      expect(typerJob.outputs.map((o: any) => o.path)).toContain('outputs/model.pt');
    },
  );
});
