/**
 * The preparation stage end to end (docs/architecture.md §4): real API, real PostgreSQL, a
 * real worker process running real PyTorch on this machine's CPU.
 *
 * A project hard-wired to CUDA, submitted with only a CPU worker online: the builtin planner
 * plans a required device-agnostic migration; the reference is taken from the rewrite on
 * the CPU worker (FALLBACK, with the reason), the candidate is checked against it on a CPU
 * worker, the accepted code is frozen, trained, reloaded and evaluated.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi } from './helpers/api.js';
import { runCli } from './helpers/cli.js';
import { repoRoot } from './helpers/processes.js';
import { startWorker } from './helpers/worker.js';

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const prisma = api.server.db.prisma;
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
await startWorker(api.url, wt.data.createWorkerToken.token, 'cpu-box');

const JOB = `query($id: ID!) { job(id: $id) { status statusReason frozenCode { id status origin } currentPlan { command acceptanceCriteria }
  outputs { path sha256 } tasks { name kind status statusReason } events(first: 3000) { kind payload } } }`;

function dirFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir)) if (statSync(path.join(dir, f)).isFile()) out[f] = readFileSync(path.join(dir, f), 'utf8');
  return out;
}

async function submit(files: Record<string, string>, request: string) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } } }`,
    { i: { title: 'cuda job', request, files: manifest } },
    user.token,
  );
  return r.data.createJob.id as string;
}

async function until(id: string, pred: (job: any) => boolean, timeoutMs = 150_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const job = (await api.gql(JOB, { id }, user.token)).data.job;
    if (pred(job)) return job;
    if (Date.now() > end)
      throw new Error(`timed out; job: ${JSON.stringify({ status: job.status, reason: job.statusReason, tasks: job.tasks })}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

describe('code hard-wired to CUDA, only CPU workers online', () => {
  it(
    'PREPARING → reference FALLBACK → device-agnostic candidate accepted → frozen → run → evaluate → SUCCEEDED',
    { timeout: 200_000 },
    async () => {
      const id = await submit(dirFiles(path.join(repoRoot, 'examples/cuda-classifier')), 'train it for 2 epochs and give me the model');
      const job = await until(id, (j) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(j.status));
      expect(job.status, job.statusReason).toBe('SUCCEEDED');
      const jobId = Buffer.from(id, 'base64').toString().split(':')[1]!;

      // The life the job went through, in the engine's words.
      const transitions = job.events.filter((e: any) => e.kind === 'job.status').map((e: any) => e.payload.transition);
      expect(transitions).toEqual([
        'startPlanning',
        'startPreparation',
        'acceptCandidate',
        'freeze',
        'startRun',
        'startValidation',
        'succeed',
      ]);
      expect(job.tasks.map((t: any) => [t.kind, t.name, t.status])).toEqual([
        ['REFERENCE', 'reference', 'SUCCEEDED'],
        ['CANDIDATE', 'candidate:migrate:0', 'SUCCEEDED'],
        ['RUN', 'run', 'SUCCEEDED'],
        ['EVALUATE', 'evaluate', 'SUCCEEDED'],
      ]);

      // The records say exactly what happened.
      const records = await prisma.preparationRecord.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
      expect(records.map((r) => [r.step, r.kind, r.outcome, r.transformation])).toEqual([
        ['reference', 'reference', 'FALLBACK', 'pytorch-device-agnostic'],
        ['migrate', 'migration', 'ACCEPTED', 'pytorch-device-agnostic'],
      ]);
      expect(records[0]!.reason).toMatch(/No NVIDIA worker was online to run the unchanged code.*device-agnostic rewrite on a CPU worker/);
      const accepted = records[1]!;
      expect(accepted.reason).toMatch(/outputs match the reference within the tolerances/);
      expect(accepted).toMatchObject({ accelerator: 'none', workload: 'torch-cpu', required: true });
      expect(accepted.candidateManifestSha).toMatch(/^[0-9a-f]{64}$/);
      expect(accepted.originalManifestSha).not.toBe(accepted.candidateManifestSha);
      expect((accepted.hardware as any).worker).toBe('cpu-box');
      expect((accepted.numericalCheck as any).ok).toBe(true);
      expect((accepted.staticChecks as any).ok).toBe(true);

      // The full run used only the frozen, accepted code: the migrated tree.
      expect(job.frozenCode).toMatchObject({ id: accepted.candidateCodeId, status: 'ACCEPTED', origin: 'pytorch-device-agnostic' });
      const run = await prisma.task.findFirstOrThrow({ where: { jobId, kind: 'RUN' } });
      expect(run.codeVersionId).toBe(accepted.candidateCodeId);
      expect(run.workload).toBe('torch-cpu');
      // The candidate ran the bounded workload (1 of 2 epochs) on the target class: it was the full
      // run's smoke run, so no separate one ran, and it gave the estimate the cap check uses.
      const plan = await prisma.plan.findFirstOrThrow({ where: { jobId } });
      expect(plan.smokeRun).toBeNull();
      expect((plan.preparationWorkload as any).workload.scale).toEqual({ unit: 'epoch', bounded: 1, full: 2 });
      const estimate = (await prisma.job.findUniqueOrThrow({ where: { id: jobId } })).estimate as any;
      expect(estimate).toMatchObject({ source: 'preparation run', measured: { worker: 'cpu-box', unit: 'epoch', bounded: 1, full: 2 } });
      expect(estimate.basis).toMatch(/^Preparation run on cpu-box: 1 of 2 epochs in [\d.]+ s/);
      expect((run.requirements as any).estimateSec).toBe(Math.ceil(estimate.highSec));
      expect(estimate.actualSec).toBeGreaterThan(0);

      // The evidence bundle: diff, reports, hardware.
      expect(accepted.evidenceSha).toMatch(/^[0-9a-f]{64}$/);
      const bundle = await api.getBlob(accepted.evidenceSha!, user.token);
      expect(bundle.status).toBe(200);
      const dir = mkdtempSync(path.join(tmpdir(), 'evidence-'));
      writeFileSync(path.join(dir, 'e.tgz'), bundle.bytes);
      execFileSync('tar', ['-xzf', 'e.tgz'], { cwd: dir });
      const files = readdirSync(path.join(dir, 'evidence')).sort();
      expect(files).toEqual(['README.txt', 'candidate.json', 'comparison.json', 'diff.patch', 'hardware.json', 'reference.json']);
      const diff = readFileSync(path.join(dir, 'evidence/diff.patch'), 'utf8');
      expect(diff).toContain(
        '-    model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2)).cuda()',
      );
      expect(diff).toContain('_CHATGPU_DEVICE');
      expect(JSON.parse(readFileSync(path.join(dir, 'evidence/comparison.json'), 'utf8')).ok).toBe(true);
      expect(JSON.parse(readFileSync(path.join(dir, 'evidence/hardware.json'), 'utf8')).worker).toBe('cpu-box');

      // Reloaded and evaluated on a worker.
      const evaluation = job.events.find((e: any) => e.kind === 'validation' && e.payload.step === 'evaluate');
      expect(evaluation.payload.metrics.eval_accuracy).toBeGreaterThan(0.5);
      expect(job.outputs.map((o: any) => o.path)).toContain('outputs/model.pt');

      // The CLI's download of the finished job: the outputs, the evidence bundle (said in its
      // last line), job.json with the same trust words as the dashboard.
      const out = mkdtempSync(path.join(tmpdir(), 'prep-results-'));
      const home = mkdtempSync(path.join(tmpdir(), 'prep-home-'));
      const r = await runCli(['watch', id, '--out', out, '--server', api.url], {
        env: {
          HOME: home,
          XDG_CONFIG_HOME: path.join(home, '.config'),
          CHATGPU_DATA_DIR: path.join(home, 'data'),
          CHATGPU_TOKEN: user.token,
        },
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout + r.stderr).toMatch(/↓ evidence\/migrate\.tar\.gz \(evidence for migrate: accepted\)/);
      expect(r.stdout + r.stderr).toMatch(/Saved \d+ output files? \([^)]*\), 1 evidence bundle \(evidence\/\), and job\.json in /);
      expect(statSync(path.join(out, 'evidence/migrate.tar.gz')).size).toBeGreaterThan(0);
      expect(JSON.parse(readFileSync(path.join(out, 'job.json'), 'utf8')).trust).toMatchObject({
        badge: expect.stringMatching(/^validated|^unverified$/),
      });
    },
  );
});
