/**
 * The NVIDIA → AMD flow end to end (issue 13): real API, real PostgreSQL, the builtin planner,
 * and two real worker processes started with --simulate-accelerator — one advertising an NVIDIA
 * RTX 4090 (CUDA), one an AMD RX 6900 XT (ROCm, gfx1030: HIP 5.2 here cannot compile gfx11xx).
 * This machine has no GPU, so what executes is, exactly:
 *   - compile checks with the real compilers: the reference task on the "NVIDIA" worker runs the
 *     example's `make` with nvcc on the original CUDA source; the API's static checks and the
 *     candidate task on the "AMD" worker compile the migrated source with `HIP_PLATFORM=amd
 *     hipcc --offload-arch=gfx1030`;
 *   - the numerics on the CPU: the kernel source itself (original on "NVIDIA", migrated on "AMD")
 *     compiled for the CPU by the example's `make cpu` and called through ctypes, so a
 *     difference in the migrated kernel shows in the compared outputs;
 *   - no GPU kernel launch anywhere. Every worker, attempt and record says "simulated accelerator".
 *
 * The example (examples/fused-gelu-mlp) is a PyTorch training script with a custom CUDA kernel
 * (fused bias + GELU, a plain .cu library built by a Makefile and loaded through ctypes) and a
 * pure-PyTorch fallback; the request is "run this on an AMD GPU".
 *
 *   1. reference on NVIDIA   2. optimization tried on NVIDIA (kept only if faster)
 *   3. CUDA C++ → HIP        4. validated on AMD against the NVIDIA reference
 *   5. full run on AMD, checkpoint reloaded and evaluated → SUCCEEDED
 * The successful flow runs once, in web/test/nvidiaToAmdPage.test.ts, which asserts every step
 * above through the API and then on the job page (one run of the whole flow instead of two: it is
 * the longest job in the suite). This file holds the workers' simulated classes and, with a
 * numerical difference planted in the code as it is built for AMD: step 4 fails → the revision
 * loop (one revision proposed, rejected again) → FAILED with the explanation.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import type { Item, ModelClient } from '../src/agents/models/types.js';
import { rawId, startTestApi } from './helpers/api.js';
import { repoRoot } from './helpers/processes.js';
import { startWorker } from './helpers/worker.js';

const NVIDIA = 'nvidia:RTX-4090:cuda-12.4:sm_89';
const AMD = 'amd:RX-6900-XT:rocm-5.2:gfx1030';
const EXAMPLE = path.join(repoRoot, 'examples/fused-gelu-mlp');

/**
 * The builtin model for every agent, except that the preparer's first revision is scripted: it
 * reads the rejected kernel header and proposes a patch that does not remove the difference (a
 * wrong guess), so the loop runs one real revision before the builtin preparer stops.
 */
function modelWithOneRevision(): ModelClient & { revisions: number } {
  const builtin = createBuiltinClient();
  const m = {
    name: 'builtin (+ one scripted revision)',
    revisions: 0,
    async respond(req: Parameters<ModelClient['respond']>[0]) {
      if (!req.instructions.startsWith('You are the preparer') || m.revisions > 0) return builtin.respond(req);
      const read = [...req.input]
        .reverse()
        .find((i): i is Extract<Item, { type: 'function_call_output' }> => i.type === 'function_call_output');
      if (!read) return { status: 'completed' as const, output: [fnCall('read_candidate_file', { path: 'csrc/gelu.cuh' })] };
      const before = (JSON.parse(read.output) as { content: string }).content;
      const after = before.replace(
        '#pragma once\n',
        '#pragma once\n// Revision 1: tanhf is the same on both platforms; keep the formula.\n',
      );
      m.revisions++;
      return {
        status: 'completed' as const,
        output: [
          fnCall('propose_patch', {
            diff: createTwoFilesPatch('a/csrc/gelu.cuh', 'b/csrc/gelu.cuh', before, after),
            summary: 'Keep the GELU formula identical on both platforms',
          }),
        ],
      };
    },
  };
  return m;
}

function fnCall(name: string, args: Record<string, unknown>): Item {
  return { type: 'function_call', call_id: `call_${name}_${Math.random().toString(36).slice(2)}`, name, arguments: JSON.stringify(args) };
}

const model = modelWithOneRevision();
const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model });
const prisma = api.server.db.prisma;
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "sim"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
const nvidiaWorker = await startWorker(api.url, wt.data.createWorkerToken.token, 'sim-nvidia', ['--simulate-accelerator', NVIDIA]);
await startWorker(api.url, wt.data.createWorkerToken.token, 'sim-amd', ['--simulate-accelerator', AMD]);

const JOB = `query($id: ID!) { job(id: $id) { status statusReason frozenCode { id status origin }
  outputs { path sha256 }
  tasks { name kind status statusReason attempts { workerName simulatedAccelerator status } }
  preparationRecords { step kind revision outcome transformation reason workload accelerator simulatedAccelerator evidenceSha }
  events(first: 3000) { kind payload } } }`;

function projectFiles(dir: string, under = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(path.join(dir, under))) {
    const rel = under ? `${under}/${f}` : f;
    if (['build', 'outputs', '__pycache__'].includes(f)) continue;
    if (statSync(path.join(dir, rel)).isDirectory()) Object.assign(out, projectFiles(dir, rel));
    else out[rel] = readFileSync(path.join(dir, rel), 'utf8');
  }
  return out;
}

async function submit(files: Record<string, string>, request: string) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } ... on Error { message } } }`,
    { i: { title: 'fused-gelu-mlp on AMD', request, files: manifest } },
    user.token,
  );
  if (!r.data?.createJob?.id) throw new Error(JSON.stringify(r));
  return r.data.createJob.id as string;
}

async function until(id: string, pred: (job: any) => boolean, timeoutMs = 720_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const job = (await api.gql(JOB, { id }, user.token)).data.job;
    if (pred(job)) return job;
    if (Date.now() > end)
      throw new Error(`timed out; job: ${JSON.stringify({ status: job.status, reason: job.statusReason, tasks: job.tasks })}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const FINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'];

describe('NVIDIA → AMD with one simulated NVIDIA and one simulated AMD worker', () => {
  it('the workers advertise their simulated classes, labelled', async () => {
    const workers = await prisma.worker.findMany({ orderBy: { name: 'asc' } });
    expect(workers.map((w) => [w.name, w.accelVendor, w.simulatedAccelerator])).toEqual([
      ['sim-amd', 'amd', AMD],
      ['sim-nvidia', 'nvidia', NVIDIA],
    ]);
    expect(workers[0]!.workloads).toEqual(expect.arrayContaining(['torch-rocm', 'hip-cxx']));
    expect(workers[0]!.workloads).not.toContain('torch-cuda');
    expect(workers[1]!.workloads).toEqual(expect.arrayContaining(['torch-cuda', 'cuda-cxx']));
    const caps = workers[1]!.capabilities as { accelerators: { name: string; simulated: boolean }[] };
    expect(caps.accelerators).toEqual([
      expect.objectContaining({ name: 'RTX 4090 (simulated accelerator)', simulated: true, runtime: 'cuda 12.4', arch: 'sm_89' }),
    ]);
    expect(nvidiaWorker.output()).toMatch(/SIMULATED ACCELERATOR nvidia:RTX-4090/);
  });

  it(
    'a numerical difference planted in the code as built for AMD: step 4 fails → a revision → FAILED with the explanation',
    { timeout: 780_000 },
    async () => {
      const files = projectFiles(EXAMPLE);
      // As ports often carry: a branch only the AMD build takes (hipcc, and the CPU build of the
      // migrated source, define __HIP_PLATFORM_AMD__), here 1 % off.
      files['csrc/gelu.cuh'] = files['csrc/gelu.cuh']!.replace(
        '  return 0.5f * v * (1.0f + tanhf(k0 * (v + k1 * v * v * v)));\n}',
        '#if defined(__HIP_PLATFORM_AMD__)\n  return 0.505f * v * (1.0f + tanhf(k0 * (v + k1 * v * v * v)));\n#else\n  return 0.5f * v * (1.0f + tanhf(k0 * (v + k1 * v * v * v)));\n#endif\n}',
      );
      expect(files['csrc/gelu.cuh']).toContain('0.505f');
      const id = await submit(files, 'run this on an AMD GPU: train it for 2 epochs and give me the model');
      const job = await until(id, (j) => FINAL.includes(j.status));
      expect(job.status).toBe('FAILED');
      const jobId = rawId(id);

      const mig = job.preparationRecords.filter((r: any) => r.step === 'migrate');
      expect(mig.map((r: any) => [r.revision, r.outcome, r.transformation])).toEqual([
        [0, 'REJECTED', 'cuda-to-hip'],
        [1, 'REJECTED', 'agent patch'],
      ]);
      for (const r of mig) {
        expect(r).toMatchObject({ workload: 'torch-rocm', simulatedAccelerator: AMD });
        expect(r.reason).toMatch(/outputs differ from the reference beyond the tolerances: outputs\/model\.pt/);
      }
      expect(model.revisions).toBe(1);
      // The compilers were happy: it is the numbers that differ.
      const rows = await prisma.preparationRecord.findMany({ where: { jobId, step: 'migrate' } });
      expect(rows.every((r) => (r.staticChecks as { ok: boolean }).ok)).toBe(true);
      expect(rows.every((r) => (r.numericalCheck as { ok: boolean }).ok === false)).toBe(true);
      // The run supervisor looked before each revision: the finding and its revision request, then
      // the follow-up that the first revision did not pass, and the second request.
      const findings = await prisma.finding.findMany({ where: { jobId, source: 'supervisor' }, orderBy: { createdAt: 'asc' } });
      expect(findings.map((f) => f.text)).toEqual([
        expect.stringMatching(/^The candidate of migrate failed its checks: /),
        expect.stringMatching(/^Follow-up: not resolved — revision 1 of migrate failed its checks too: /),
      ]);
      const requests = await prisma.jobEvent.findMany({ where: { jobId, kind: 'revision.requested' }, orderBy: { id: 'asc' } });
      expect(requests.map((e) => (e.payload as { revision: number }).revision)).toEqual([1, 2]);
      // The explanation: the stop, what failed and where.
      expect(job.statusReason).toMatch(/cannot revise this candidate/);
      expect(job.statusReason).toMatch(/differ from the reference beyond the tolerances/);
      // Nothing ran on the full workload.
      expect(job.tasks.map((t: any) => t.kind)).not.toContain('RUN');
      expect(job.frozenCode).toBeNull();
    },
  );
});
