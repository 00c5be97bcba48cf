/**
 * The revision loop of a required preparation step (docs/architecture.md §4), on real
 * PostgreSQL with the real toolchain: CUDA C++ that uses cuDNN is migrated to HIP; hipcc
 * refuses the candidate (cudnn.h has no HIP counterpart here), and the compiler's feedback
 * — file, line, message — goes to the preparation agent, which proposes revisions as
 * unified diffs. NVIDIA and AMD machines cannot be reached from here: protocol-level worker
 * doubles (helpers/protocolClient.ts, labelled simulated) stand in for them and complete
 * what they claim with exit code 0.
 *
 *   - scripted model, budget 2, patches that still do not compile → FAILED with what was
 *     tried; the criteria are byte-identical before and after; before each revision the run
 *     supervisor's request_revision adds its evidence to the compiler's feedback
 *   - the real `openai` client against the local fake Responses server: one patch that
 *     compiles → the candidate runs on the AMD double → ACCEPTED → frozen → run → SUCCEEDED
 */
import { createTwoFilesPatch } from 'diff';
import { afterAll, describe, expect, it } from 'vitest';
import { createOpenAIClient } from '../src/agents/models/openaiClient.js';
import { completed, createScriptedClient, fnCall, type ScriptStep } from '../src/agents/models/scriptedClient.js';
import type { ModelClient } from '../src/agents/models/types.js';
import { findPython } from '../src/preparation/findPython.js';
import { migrateTree } from '../src/preparation/migrateTree.js';
import { waitFor } from './helpers/agents.js';
import { startTestApi, type TestApi } from './helpers/api.js';
import { startFakeOpenAI, wireFunctionCall, wireMessage } from './helpers/fakeOpenAI.js';
import { NVIDIA_CAPS, ProtocolWorker, createWorkerToken } from './helpers/protocolClient.js';

const KERNEL = `#include <cstdio>
#include <cuda_runtime.h>
#include <cudnn.h>

__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

int main() {
  const int n = 1 << 10;
  float *d;
  cudaMalloc(&d, n * sizeof(float));
  scale<<<(n + 255) / 256, 256>>>(d, 2.0f, n);
  cudaDeviceSynchronize();
  cudnnHandle_t h;
  cudnnCreate(&h);
  printf("ok\\n");
  cudaFree(d);
  return 0;
}
`;
const MAKEFILE = `run: scale\n\t./scale\n\nscale: kernel.cu\n\tnvcc -O2 -o scale kernel.cu\n`;

const PLAN = {
  summary: 'Migrate the CUDA program to HIP for the AMD worker, check it against the NVIDIA reference, then run it.',
  asks: [{ ask: 'on the AMD GPU', kind: 'hardware', status: 'honoured', detail: 'migrated to HIP and run on an AMD worker' }],
  steps: ['Reference on NVIDIA', 'Migrate CUDA → HIP (required)', 'Run on AMD'],
  command: 'make run',
  environment: null,
  hardware: { workload: 'hip-cxx', accelVendor: 'amd', minMemoryMiB: null, minAccelMemoryMiB: null },
  timeoutSec: 600,
  outputs: ['outputs'],
  acceptance: { exitCode: 0, requiredFiles: [], metrics: [{ name: 'ok', op: '>=', value: 0 }], evaluate: null },
  preparation: {
    workload: { command: 'make run', timeoutSec: 300 },
    compare: ['outputs'],
    reference: { workload: 'cuda-cxx', accelVendor: 'nvidia' },
    target: { workload: 'hip-cxx', accelVendor: 'amd' },
    steps: [{ name: 'hip', kind: 'migration', transformation: 'cuda-to-hip', required: true, tolerance: null }],
    revisionBudget: 2 as number,
    frozenFiles: null,
    pinRun: null,
  },
};
// No metric thresholds in a real plan for this program; one here would never be reported.
PLAN.acceptance.metrics = [];

const AMD_CAPS = {
  os: 'linux',
  arch: 'x64',
  cpu: { model: 'Simulated CPU (test double)', cores: 16 },
  memoryMiB: 65536,
  accelerators: [
    { vendor: 'amd', name: 'Simulated AMD Instinct MI210 (test double)', memoryMiB: 65536, runtime: 'rocm 5.2', arch: 'gfx90a' },
  ],
  workloads: ['python', 'shell', 'hip-cxx'],
};
const SIM_NVIDIA = { ...NVIDIA_CAPS, accelerators: [{ ...NVIDIA_CAPS.accelerators[0]!, name: 'Simulated NVIDIA RTX 4090 (test double)' }] };

const python = (await findPython())!.path;
const migrated = (await migrateTree({ 'kernel.cu': KERNEL, Makefile: MAKEFILE }, { target: 'rocm' }, { python })).tree as Record<
  string,
  string
>;

/** A unified diff of one file, as a model would write it. */
const patch = (file: string, before: string, after: string) => createTwoFilesPatch(`a/${file}`, `b/${file}`, before, after);

/** Doubles that claim and complete every task they are offered, until stopped. */
function serve(w: ProtocolWorker): () => Promise<void> {
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      const got = await w.claim({ waitMs: 300 }).catch(() => []);
      for (const a of got) await w.complete(a, { exitCode: 0 });
    }
  })();
  return async () => {
    stop = true;
    await loop;
  };
}

async function setUp(model: ModelClient): Promise<{ api: TestApi; user: { token: string; userId: string }; stop: () => Promise<void> }> {
  const api = await startTestApi({ TICK_INTERVAL_SEC: '1' }, { scheduler: true, model });
  const user = await api.signUp();
  const nvidia = new ProtocolWorker(api, await createWorkerToken(api, user.token, 'sim-nvidia'), 'sim-nvidia');
  await nvidia.hello({ capabilities: SIM_NVIDIA });
  const amd = new ProtocolWorker(api, await createWorkerToken(api, user.token, 'sim-amd'), 'sim-amd');
  await amd.hello({ capabilities: AMD_CAPS });
  const stops = [serve(nvidia), serve(amd)];
  return { api, user, stop: async () => void (await Promise.all(stops.map((s) => s()))) };
}

async function submit(api: TestApi, token: string): Promise<string> {
  const files = [];
  for (const [p, content] of Object.entries({ 'kernel.cu': KERNEL, Makefile: MAKEFILE }))
    files.push({ path: p, sha256: (await api.putBlob(content, token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`,
    { i: { title: 'hip', request: 'run it on the AMD GPU', files } },
    token,
  );
  return Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]!;
}

async function finalJob(api: TestApi, jobId: string, timeoutMs = 120_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const job = await api.server.db.prisma.job.findUniqueOrThrow({ where: { id: jobId } });
    if (['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'].includes(job.status)) return job;
    if (Date.now() > end) throw new Error(`timed out in ${job.status}: ${job.statusReason}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

describe('a required migration that does not compile', () => {
  it(
    'compiler feedback drives the revisions; after the budget the job FAILS with what was tried; the criteria never change',
    { timeout: 150_000 },
    async () => {
      const rev1 = migrated['kernel.cu']!.replace('#include <cudnn.h>', '#include <miopen/miopen.h>');
      const rev2 = rev1.replace('#include <miopen/miopen.h>\n', '');
      const seenFeedback: string[] = [];
      const preparer =
        (after: string, before: string): ScriptStep =>
        (req) => {
          seenFeedback.push(
            req.input
              .filter((i) => i.type === 'message')
              .map((i) => (i as { content: string }).content)
              .at(-1) ?? '',
          );
          return completed(fnCall('propose_patch', { diff: patch('kernel.cu', before, after), summary: 'try another header' }));
        };
      // Before each revision the run supervisor looks (candidate_rejected) and sends its evidence with the request.
      const supervisor = (revision: number) =>
        completed(
          fnCall('take_action', {
            kind: 'request_revision',
            step: 'hip',
            text: `Hint ${revision}: a header hipcc cannot find; drop what needs it.`,
          }),
        );
      const model = createScriptedClient([
        completed(fnCall('submit_plan', PLAN)),
        supervisor(1),
        preparer(rev1, migrated['kernel.cu']!),
        supervisor(2),
        preparer(rev2, rev1),
      ]);
      const { api, user, stop } = await setUp(model);
      afterAll(stop);
      const prisma = api.server.db.prisma;
      const jobId = await submit(api, user.token);

      const planned = await (async () => {
        for (;;) {
          const j = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
          if (j.acceptanceCriteria) return j;
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      const criteriaBefore = JSON.stringify(planned.acceptanceCriteria);
      const job = await finalJob(api, jobId);

      expect(job.status).toBe('FAILED');
      expect(job.statusReason).toMatch(/The required step hip \(cuda-to-hip\) could not pass after 2 revisions \(budget 2\)/);
      expect(job.statusReason).toMatch(/'cudnn\.h' file not found/);
      expect(job.statusReason).toMatch(/revision 1 \(agent patch\).*'miopen\/miopen\.h' file not found/);
      expect(job.statusReason).toMatch(/The acceptance criteria were not changed/);
      expect(JSON.stringify(job.acceptanceCriteria)).toBe(criteriaBefore);
      const plan = await prisma.plan.findUniqueOrThrow({ where: { id: job.currentPlanId! } });
      expect(JSON.stringify(plan.acceptanceCriteria)).toBe(criteriaBefore);

      // Each revision saw the compiler's feedback on the previous candidate (file and line).
      expect(seenFeedback[0]).toMatch(/kernel\.cu:3:\d+: error: 'cudnn\.h' file not found \[hipcc\]/);
      expect(seenFeedback[1]).toMatch(/kernel\.cu:3:\d+: error: 'miopen\/miopen\.h' file not found \[hipcc\]/);
      // … and the supervisor's evidence, requested through take_action request_revision (one per revision).
      expect(seenFeedback[0]).toMatch(/The run supervisor: Hint 1: a header hipcc cannot find; drop what needs it\.$/);
      expect(seenFeedback[1]).toMatch(/The run supervisor: Hint 2: /);
      const requests = await prisma.jobEvent.findMany({ where: { jobId, kind: 'revision.requested' }, orderBy: { id: 'asc' } });
      expect(requests.map((e) => [(e.payload as any).step, (e.payload as any).revision, (e.payload as any).by])).toEqual([
        ['hip', 1, 'supervisor'],
        ['hip', 2, 'supervisor'],
      ]);
      const actions = await prisma.action.findMany({ where: { jobId, kind: 'take_action' }, orderBy: { createdAt: 'asc' } });
      expect(actions.map((a) => [(a.input as any).kind, a.status])).toEqual([
        ['request_revision', 'DONE'],
        ['request_revision', 'DONE'],
      ]);

      const records = await prisma.preparationRecord.findMany({ where: { jobId }, orderBy: [{ revision: 'asc' }, { createdAt: 'asc' }] });
      expect(records.map((x) => [x.step, x.revision, x.outcome, x.transformation])).toEqual([
        ['reference', 0, 'ACCEPTED', 'none'],
        ['hip', 0, 'REJECTED', 'cuda-to-hip'],
        ['hip', 1, 'REJECTED', 'agent patch'],
        ['hip', 2, 'REJECTED', 'agent patch'],
      ]);
      expect(records.filter((x) => x.step === 'hip').every((x) => (x.staticChecks as { ok: boolean }).ok === false)).toBe(true);
      // No candidate ever reached a worker; the reference ran once on the (simulated) NVIDIA machine.
      const tasks = await prisma.task.findMany({ where: { jobId } });
      expect(tasks.map((t) => [t.kind, t.status])).toEqual([['REFERENCE', 'SUCCEEDED']]);
    },
  );
});

describe('a revision proposed by the real openai client', () => {
  it(
    'the fake Responses server receives the compiler feedback, its patch compiles, runs on the AMD double and is accepted',
    { timeout: 150_000 },
    async () => {
      const fake = await startFakeOpenAI();
      afterAll(() => fake.close());
      const fixed = migrated['kernel.cu']!.replace('#include <cudnn.h>\n', '').replace('  cudnnHandle_t h;\n  cudnnCreate(&h);\n', '');
      let feedback = '';
      // The plan; the run supervisor's request for the revision (candidate_rejected); the preparer's patch.
      fake.enqueue(
        { output: [wireFunctionCall('submit_plan', PLAN)] },
        { output: [wireFunctionCall('take_action', { kind: 'request_revision', step: 'hip', text: 'cuDNN is included but never used.' })] },
        (body: any) => {
          feedback = JSON.stringify(body.input);
          return {
            output: [
              wireFunctionCall('propose_patch', {
                diff: patch('kernel.cu', migrated['kernel.cu']!, fixed),
                summary: 'cuDNN is not used for anything: drop it',
              }),
            ],
          };
        },
      );
      // Once the revision is accepted, the supervisor records that it worked (candidate_accepted) —
      // slowly here: the full run ends the job first, and the follow-up is still recorded.
      fake.enqueue(
        {
          delayMs: 4000,
          then: {
            output: [
              wireFunctionCall('remember', {
                observation: 'Follow-up: resolved — revision 1 of hip compiled and passed.',
                evidence: ['preparation:hip:1'],
                trigger: 'candidate_accepted',
              }),
            ],
          },
        },
        { output: [wireMessage('Recorded.')] },
      );
      const model = createOpenAIClient({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'gpt-test', timeoutMs: 20_000, maxRetries: 0 });
      PLAN.preparation.revisionBudget = 1;
      const { api, user, stop } = await setUp(model);
      afterAll(stop);
      const prisma = api.server.db.prisma;
      const jobId = await submit(api, user.token);
      const job = await finalJob(api, jobId);
      expect(job.status, job.statusReason ?? '').toBe('SUCCEEDED');
      expect(feedback).toMatch(/kernel\.cu:3:\d+: error: 'cudnn\.h' file not found/);
      expect(feedback).toContain('The run supervisor: cuDNN is included but never used.');
      expect(await prisma.finding.count({ where: { jobId, source: 'supervisor' } })).toBe(0); // still on its way
      const followUp = await waitFor('the follow-up finding', async () => {
        const found = await prisma.finding.findMany({ where: { jobId, source: 'supervisor' } });
        return found.length ? found : null;
      });
      expect(followUp.map((f) => [f.text, (f.data as { trigger?: string }).trigger])).toEqual([
        ['Follow-up: resolved — revision 1 of hip compiled and passed.', 'candidate_accepted'],
      ]);
      expect(fake.unexpected).toBe(0); // no request found the queue empty (the last answer is left when the job ended first)

      const records = await prisma.preparationRecord.findMany({ where: { jobId, step: 'hip' }, orderBy: { revision: 'asc' } });
      expect(records.map((x) => [x.revision, x.outcome, x.transformation])).toEqual([
        [0, 'REJECTED', 'cuda-to-hip'],
        [1, 'ACCEPTED', 'agent patch'],
      ]);
      const accepted = await prisma.codeVersion.findUniqueOrThrow({ where: { id: records[1]!.candidateCodeId! } });
      expect(accepted).toMatchObject({ origin: 'agent patch', status: 'ACCEPTED', step: 'hip', revision: 1 });
      expect(job.frozenCodeId).toBe(accepted.id);
      const tasks = await prisma.task.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
      expect(tasks.map((t) => [t.kind, t.workload, t.status])).toEqual([
        ['REFERENCE', 'cuda-cxx', 'SUCCEEDED'],
        ['CANDIDATE', 'hip-cxx', 'SUCCEEDED'],
        ['RUN', 'hip-cxx', 'SUCCEEDED'],
      ]);
      expect(tasks[2]!.codeVersionId).toBe(accepted.id);
    },
  );
});
