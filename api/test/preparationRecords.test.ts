/**
 * Preparation records are searchable and authorized (docs/architecture.md §4, invariant 7):
 * the GraphQL connection's filters, who sees what (owner, stranger, operator, anonymous),
 * `chatgpu records --json` round-tripping, and a regression case written from a REJECTED
 * record that fails its re-check again until the transformation is fixed.
 */
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { manifestFromTree } from '../src/domain/preparation/codeTrees.js';
import { insertRecord, type RecordInput } from '../src/domain/preparation/records.js';
import { findPython } from '../src/preparation/findPython.js';
import { migrateTree } from '../src/preparation/migrateTree.js';
import { checkCase } from '../src/preparation/regressionCase.js';
import { runStaticChecks } from '../src/preparation/runStaticChecks.js';
import type { ManifestEntry } from '../src/domain/blobs/paths.js';
import { createJobAt } from './helpers/agents.js';
import { startTestApi } from './helpers/api.js';
import { runCli } from './helpers/cli.js';

const OPERATOR = `op${Date.now()}@example.com`;
const api = await startTestApi({ CHATGPU_OPERATORS: ` ${OPERATOR.toUpperCase()} ,other@example.com` });
const r = api.server.resources;
const prisma = api.server.db.prisma;
const python = (await findPython())!.path;

const KERNEL =
  '#include <cuda_runtime.h>\n#include <cudnn.h>\n__global__ void k(float *x) { x[threadIdx.x] = 1.0f; }\nint main() { cudnnHandle_t h; cudnnCreate(&h); float *d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); cudaDeviceSynchronize(); return 0; }\n';
const MAKEFILE = 'run: k\n\t./k\nk: kernel.cu\n\tnvcc -o k kernel.cu\n';
const SPEC = {
  workload: { command: 'make run' },
  reference: { workload: 'cuda-cxx', accelVendor: 'nvidia' },
  target: { workload: 'hip-cxx', accelVendor: 'amd' },
  steps: [{ name: 'hip', kind: 'migration', transformation: 'cuda-to-hip', required: true }],
};

const gid = (type: string, id: string) => Buffer.from(`${type}:${id}`).toString('base64');

/** A job with its ORIGINAL version, a plan with a preparation spec, and the migrated candidate. */
async function seedJob(token: string, userId: string) {
  const { jobId } = await createJobAt(api.url, token, { 'kernel.cu': KERNEL, Makefile: MAKEFILE });
  const original = await prisma.codeVersion.findFirstOrThrow({ where: { jobId, status: 'ORIGINAL' } });
  const plan = await prisma.plan.create({
    data: {
      jobId,
      version: 1,
      author: 'test',
      summary: 's',
      steps: [],
      command: 'make run',
      requirements: { workload: 'hip-cxx' },
      outputs: ['outputs'],
      acceptanceCriteria: { exitCode: 0, requiredFiles: [], metrics: [] },
      preparationWorkload: SPEC,
    },
  });
  await prisma.job.update({ where: { id: jobId }, data: { currentPlanId: plan.id } });
  const migrated = await migrateTree({ 'kernel.cu': KERNEL, Makefile: MAKEFILE }, { target: 'rocm' }, { python });
  const manifest = await manifestFromTree(
    r,
    original.manifest as unknown as ManifestEntry[],
    migrated.tree as Record<string, string>,
    userId,
  );
  const candidate = await prisma.codeVersion.create({
    data: {
      jobId,
      status: 'REJECTED',
      origin: 'cuda-to-hip',
      manifest: manifest as never,
      fileCount: manifest.length,
      totalBytes: 1n,
      step: 'hip',
      revision: 0,
    },
  });
  return {
    jobId,
    original: { id: original.id, manifest: original.manifest as unknown as ManifestEntry[] },
    candidate: { id: candidate.id, manifest },
    migrated,
  };
}

async function record(input: Partial<RecordInput> & Pick<RecordInput, 'jobId' | 'original' | 'outcome'>, createdAt?: Date) {
  const base: RecordInput = {
    step: 'hip',
    kind: 'migration',
    revision: 0,
    required: true,
    hardware: { worker: 'sim-amd' },
    workload: 'hip-cxx',
    accelerator: 'amd',
    taskId: null,
    attemptId: null,
    workerId: null,
    candidate: null,
    transformation: 'cuda-to-hip',
    reason: 'because',
    ...input,
  };
  const rec = await prisma.$transaction((tx) => insertRecord(tx, { now: () => createdAt ?? new Date() }, base));
  return rec.id;
}

const owner = await api.signUp();
const stranger = await api.signUp();
const operator = await api.signUp(OPERATOR);
const a = await seedJob(owner.token, owner.userId);
const checks = await runStaticChecks(a.migrated.tree, { target: 'rocm', python });
const rejected = await record({
  jobId: a.jobId,
  original: a.original,
  candidate: a.candidate,
  outcome: 'REJECTED',
  staticChecks: checks,
  reason: `The candidate did not pass its static checks: kernel.cu:2: 'cudnn.h' file not found`,
});
const skipped = await record(
  {
    jobId: a.jobId,
    original: a.original,
    step: 'opt',
    kind: 'optimization',
    required: false,
    transformation: 'pin-memory',
    outcome: 'SKIPPED',
    workload: 'torch-cuda',
    accelerator: 'nvidia',
  },
  new Date('2026-01-01T00:00:00Z'),
);
const b = await seedJob(stranger.token, stranger.userId);
const theirs = await record({
  jobId: b.jobId,
  original: b.original,
  step: 'reference',
  kind: 'reference',
  outcome: 'FALLBACK',
  workload: 'torch-cpu',
  accelerator: 'none',
  transformation: 'pytorch-device-agnostic',
});

const LIST = `query($f: PreparationRecordFilter) { preparationRecords(first: 100, filter: $f) { totalCount edges { node { id step outcome transformation workload accelerator reason job { id } } } } }`;
async function ids(token: string, f: Record<string, unknown> = {}) {
  const res = await api.gql(LIST, { f }, token);
  if (res.errors) throw new Error(JSON.stringify(res.errors));
  const nodes = res.data.preparationRecords.edges.map((e: any) => e.node);
  expect(res.data.preparationRecords.totalCount).toBe(nodes.length);
  return nodes.map((n: any) => Buffer.from(n.id, 'base64').toString().split(':')[1]).sort();
}

describe('preparationRecords', () => {
  it('filters by outcome, transformation, workload, accelerator, job and date', async () => {
    expect(await ids(owner.token)).toEqual([rejected, skipped].sort());
    expect(await ids(owner.token, { outcome: ['REJECTED'] })).toEqual([rejected]);
    expect(await ids(owner.token, { outcome: ['REJECTED', 'SKIPPED'] })).toEqual([rejected, skipped].sort());
    expect(await ids(owner.token, { transformation: 'pin-memory' })).toEqual([skipped]);
    expect(await ids(owner.token, { workload: 'hip-cxx' })).toEqual([rejected]);
    expect(await ids(owner.token, { accelerator: 'nvidia' })).toEqual([skipped]);
    expect(await ids(owner.token, { jobId: gid('Job', a.jobId) })).toEqual([rejected, skipped].sort());
    expect(await ids(owner.token, { since: '2026-06-01T00:00:00Z' })).toEqual([rejected]);
    expect(await ids(owner.token, { jobId: 'not-an-id' })).toEqual([]);
  });

  it("a user sees only their own jobs' records; an operator sees every job's; anonymous is refused", async () => {
    expect(await ids(stranger.token)).toEqual([theirs]);
    expect(await ids(stranger.token, { jobId: gid('Job', a.jobId) })).toEqual([]);
    expect(await ids(operator.token)).toEqual([rejected, skipped, theirs].sort());
    const node = (token: string) =>
      api.gql(
        `query($id: ID!) { node(id: $id) { ... on PreparationRecord { id step } } }`,
        { id: gid('PreparationRecord', rejected) },
        token,
      );
    expect((await node(owner.token)).data.node).toEqual({ id: gid('PreparationRecord', rejected), step: 'hip' });
    expect((await node(stranger.token)).data.node).toBeNull();
    expect((await node(operator.token)).data.node).toMatchObject({ step: 'hip' });
    const anon = await api.gql(LIST, {});
    expect(anon.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const viaJob = await api.gql(
      `query($id: ID!) { job(id: $id) { preparationRecords { step outcome } } }`,
      { id: gid('Job', a.jobId) },
      owner.token,
    );
    expect(viaJob.data.job.preparationRecords).toEqual([
      { step: 'opt', outcome: 'SKIPPED' },
      { step: 'hip', outcome: 'REJECTED' },
    ]);
  });

  it("chatgpu records --json writes one JSON record per line that round-trips to the API's", async () => {
    const res = await runCli(['records', '--json', '--server', api.url, '--token', owner.token]);
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => Buffer.from(l.id, 'base64').toString().split(':')[1]).sort()).toEqual([rejected, skipped].sort());
    const api1 = (
      await api.gql(
        `query { preparationRecords(first: 100) { edges { node { id step kind revision outcome reason transformation staticChecks originalManifestSha job { id } } } } }`,
        {},
        owner.token,
      )
    ).data.preparationRecords.edges.map((e: any) => e.node);
    for (const node of api1) expect(lines.find((l) => l.id === node.id)).toMatchObject(node);
    const filtered = await runCli(['records', '--json', '--outcome', 'skipped', '--server', api.url, '--token', owner.token]);
    expect(
      filtered.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).outcome),
    ).toEqual(['SKIPPED']);
    const bad = await runCli(['records', '--outcome', 'maybe', '--server', api.url, '--token', owner.token]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Unknown outcome MAYBE/);
  });

  it(
    'a regression case from a REJECTED record fails its re-check again; a fixed transformation makes it pass',
    { timeout: 60_000 },
    async () => {
      const dir = path.join(await mkdtemp(path.join(tmpdir(), 'case-')), 'cudnn-case');
      const wrote = await runCli([
        'records',
        'case',
        gid('PreparationRecord', rejected),
        '--out',
        dir,
        '--server',
        api.url,
        '--token',
        owner.token,
      ]);
      expect(wrote.code, wrote.stderr).toBe(0);
      expect((await readdir(dir)).sort()).toEqual(['README.md', 'candidate.diff', 'case.json', 'original']);
      expect((await readdir(path.join(dir, 'original'))).sort()).toEqual(['Makefile', 'kernel.cu']);
      expect(await readFile(path.join(dir, 'original/kernel.cu'), 'utf8')).toBe(KERNEL);
      const spec = JSON.parse(await readFile(path.join(dir, 'case.json'), 'utf8'));
      expect(spec).toMatchObject({
        transformation: 'cuda-to-hip',
        target: 'rocm',
        command: 'make run',
        expect: 'ACCEPTED',
        recorded: { outcome: 'REJECTED' },
      });
      expect(await readFile(path.join(dir, 'candidate.diff'), 'utf8')).toContain('+#include <hip/hip_runtime.h>');

      const check = await runCli(['records', 'check', dir]);
      expect(check.code).toBe(1);
      expect(check.stdout).toMatch(
        /cuda-to-hip on rocm: REJECTED \(static checks failed: kernel\.cu:2: 'cudnn\.h' file not found\); expected ACCEPTED — it does not match/,
      );

      // A transformation that also handles cuDNN (here: drops the unused handle) passes the same case.
      const fixed = async (tree: Record<string, string>, ctx: any, opts: { python: string }) => {
        const res = await migrateTree(tree, ctx, opts);
        const k = res.tree['kernel.cu']!.replace('#include <cudnn.h>\n', '').replace('cudnnHandle_t h; cudnnCreate(&h); ', '');
        return { ...res, tree: { ...res.tree, 'kernel.cu': k } };
      };
      const passed = await checkCase(dir, { python, transform: fixed });
      expect(passed.outcome).toBe('ACCEPTED');
      expect(passed.notChecked).toEqual(['the run: the case has no reference outputs']);
      // Someone else cannot write a case from the owner's record.
      const foreign = await runCli([
        'records',
        'case',
        gid('PreparationRecord', rejected),
        '--out',
        `${dir}-x`,
        '--server',
        api.url,
        '--token',
        stranger.token,
      ]);
      expect(foreign.code).toBe(1);
      expect(foreign.stderr).toMatch(/No preparation record/);
    },
  );
});
