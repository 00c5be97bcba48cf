/**
 * The run supervisor's `replan`, end to end (issue 12's response table: "a missing dependency
 * … name it from the logs and ask / replan on a worker that has it, never retry blindly"): a
 * real API with the builtin agents, a real worker process that installs packages from a package
 * index on 127.0.0.1 (wheels built by the test, no internet), real PostgreSQL.
 *
 * The project imports its plugin by name (importlib, the name in a text file), so the planner
 * cannot see the import and its first plan installs nothing; requirements.txt pins the package.
 * The run fails on `ModuleNotFoundError`; the supervisor names the module and hands the job back
 * to the planner with that evidence; the new plan installs the pinned package in a setup phase,
 * keeps the criteria the first plan fixed, and its run succeeds; the supervisor records that the
 * replan worked.
 */
import { describe, expect, it } from 'vitest';
import { tempPipIndex } from '../../worker/test/pipIndex.js';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi, type TestApi } from './helpers/api.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker } from './helpers/worker.js';

const api: TestApi = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const prisma = api.server.db.prisma;
const user = await api.signUp();
const index = await tempPipIndex();

const FILES = {
  'main.py': [
    'import importlib, os',
    '# The plugin is named in plugin.txt and imported by name: no import statement names it.',
    'name = open("plugin.txt").read().strip()',
    'plugin = importlib.import_module(name)',
    'os.makedirs("outputs", exist_ok=True)',
    'open("outputs/value.txt", "w").write(plugin.VALUE)',
    'print("VALUE", plugin.VALUE)',
    '',
  ].join('\n'),
  'plugin.txt': 'chatgpu_testpkg\n',
  'requirements.txt': 'chatgpu-testpkg==0.1\n',
};

describe('replan after a module missing at run time (real worker, builtin agents)', () => {
  it(
    'the run fails on the missing module; the supervisor replans with it; the new plan installs the pinned package and keeps the criteria; the run succeeds and the follow-up says so',
    { timeout: 240_000 },
    async () => {
      const wt = await api.gql(
        `mutation { createWorkerToken(input: {name: "lab"}) { ... on CreatedWorkerToken { token } } }`,
        {},
        user.token,
      );
      await startWorker(api.url, wt.data.createWorkerToken.token, 'installer', [
        '--python',
        '/usr/bin/python3',
        '--pip-index-url',
        index.url,
        '--env-cache-mb',
        '512',
      ]);
      await waitFor(() => prisma.worker.findFirst({ where: { name: 'installer', status: 'ONLINE' } }), 20_000, 'worker online');

      const files = [];
      for (const [p, content] of Object.entries(FILES)) files.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
      const r = await api.gql(
        `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } ... on Error { message } } }`,
        { i: { title: 'plugin', request: 'run main.py', files } },
        user.token,
      );
      expect(r.errors).toBeUndefined();
      const jobId = Buffer.from(r.data.createJob.id, 'base64').toString().split(':')[1]!;

      const job = await waitFor(
        async () => {
          const j = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
          return ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'].includes(j.status) ? j : null;
        },
        200_000,
        'the job to end',
      );
      expect(job.status, job.statusReason ?? '').toBe('SUCCEEDED');

      // Two plans: the first installs nothing; the second installs the pinned package; one set of criteria.
      const plans = await prisma.plan.findMany({ where: { jobId }, orderBy: { version: 'asc' } });
      expect(plans).toHaveLength(2);
      expect((plans[0]!.requirements as { setup?: unknown }).setup).toBeUndefined();
      expect((plans[1]!.requirements as { setup?: { pip: string[] } }).setup?.pip).toEqual(['chatgpu-testpkg==0.1']);
      expect(plans[1]!.acceptanceCriteria).toEqual(plans[0]!.acceptanceCriteria);
      expect(job.currentPlanId).toBe(plans[1]!.id);
      expect(job.acceptanceCriteria).toEqual(plans[0]!.acceptanceCriteria);

      // The first run: failed on the module, superseded by the replan (its attempt keeps the failure).
      const runs = await prisma.task.findMany({
        where: { jobId, kind: 'RUN' },
        orderBy: { createdAt: 'asc' },
        include: { attempts: true },
      });
      expect(runs.map((t) => [t.name, t.status])).toEqual([
        ['run', 'CANCELLED'],
        ['run', 'SUCCEEDED'],
      ]);
      expect(runs[0]!.attempts).toHaveLength(1);
      expect(runs[0]!.attempts[0]).toMatchObject({
        status: 'FAILED',
        errorClass: 'DEPENDENCY',
        errorMessage: expect.stringMatching(/^missing module: chatgpu_testpkg/),
      });
      expect(runs[0]!.statusReason).toMatch(/^Superseded: the run supervisor handed the job back to the planner/);

      // The replan: RUNNING → PLANNING with the evidence; the new planner run was told it.
      const replans = await prisma.jobEvent.findMany({
        where: { jobId, kind: 'job.status', payload: { path: ['transition'], equals: 'replan' } },
      });
      expect(replans).toHaveLength(1);
      expect((replans[0]!.payload as { evidence: string }).evidence).toMatch(/missing module: chatgpu_testpkg/);
      const planners = await prisma.agentRun.findMany({ where: { jobId, agent: 'planner' }, orderBy: { createdAt: 'asc' } });
      expect(planners.map((p) => p.status)).toEqual(['COMPLETED', 'COMPLETED']);
      const brief = await prisma.agentItem.findFirstOrThrow({
        where: { runId: planners[1]!.id, type: 'message' },
        orderBy: { seq: 'asc' },
      });
      expect(JSON.stringify(brief.payload)).toMatch(/Replan 1: the run supervisor handed the job back .*missing module: chatgpu_testpkg/);

      // The supervisor's findings: what it saw and tried, then that it worked.
      const findings = await prisma.finding.findMany({ where: { jobId, source: 'supervisor' }, orderBy: { createdAt: 'asc' } });
      expect(findings.map((f) => (f.data as { remedy?: string | null }).remedy ?? null)).toEqual(['replan', null]);
      expect(findings[0]!.text).toMatch(/stopped on a missing module: chatgpu_testpkg/);
      expect(findings[1]!.text).toMatch(/^Follow-up: resolved — after replan, attempt 1 of run succeeded on installer\./);
      const actions = await prisma.action.findMany({ where: { jobId, kind: 'take_action' } });
      expect(actions.map((a) => [(a.input as { kind: string }).kind, a.status])).toEqual([['replan', 'DONE']]);

      // The output is the plugin's, installed from the local index.
      const q = await api.gql(`query($id: ID!) { job(id: $id) { outputs { path } } }`, { id: r.data.createJob.id }, user.token);
      expect(q.data.job.outputs.map((o: { path: string }) => o.path)).toContain('outputs/value.txt');
      const logs = await prisma.logChunk.findMany({ where: { attemptId: runs[1]!.attempts[0]!.id }, orderBy: { seq: 'asc' } });
      expect(logs.map((l) => l.text).join('\n')).toContain('VALUE from the local index');
    },
  );
});
