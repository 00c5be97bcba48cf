/**
 * Dependencies checked before anything runs, end to end with the builtin planner, a real worker
 * that installs packages from a local index on 127.0.0.1 (issue 11): a listed package the
 * worker's Python lacks is installed in the job's setup phase and the environment is reused by
 * the next job; an import nothing lists is named before the run, and nothing runs.
 */
import { describe, expect, it } from 'vitest';
import { tempPipIndex } from '../../worker/test/pipIndex.js';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi } from './helpers/api.js';
import { startWorker } from './helpers/worker.js';

const index = await tempPipIndex();
const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
await startWorker(api.url, wt.data.createWorkerToken.token, 'installer', ['--python', '/usr/bin/python3', '--pip-index-url', index.url]);

const JOB = `query($id: ID!) { job(id: $id) { status statusReason currentPlan { summary } openQuestions { text } tasks { kind status attempts { id } } } }`;

async function run(files: Record<string, string>, request: string) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } } }`,
    { i: { title: 'deps', request, files: manifest } },
    user.token,
  );
  const id = r.data.createJob.id as string;
  for (const end = Date.now() + 110_000; ; await new Promise((res) => setTimeout(res, 250))) {
    const job = (await api.gql(JOB, { id }, user.token)).data.job;
    if (['SUCCEEDED', 'FAILED', 'NEEDS_INPUT'].includes(job.status)) return job;
    if (Date.now() > end) throw new Error(`timed out: ${JSON.stringify(job)}`);
  }
}

async function logsOf(attemptId: string) {
  return (await api.server.db.prisma.logChunk.findMany({ where: { attemptId }, orderBy: { seq: 'asc' } })).map((l) => l.text).join('\n');
}

const project = {
  'requirements.txt': 'chatgpu-testpkg==0.1\n',
  'train.py': 'import chatgpu_testpkg\nif __name__ == "__main__":\n    open("outputs/value.txt", "w").write(chatgpu_testpkg.VALUE)\n',
};

describe('dependencies, before anything runs', () => {
  it(
    'a listed package the workers lack is installed in the setup phase; the next job reuses the environment',
    { timeout: 120_000 },
    async () => {
      const first = await run(project, 'run it');
      expect(first.status, first.statusReason).toBe('SUCCEEDED');
      expect(first.currentPlan.summary).toMatch(/A setup phase installs chatgpu-testpkg==0\.1 on the worker first\./);
      const firstLogs = await logsOf(first.tasks[0].attempts[0].id);
      expect(firstLogs).toMatch(/worker: environment [0-9a-f]{8} created in \d+\.\ds/);
      const second = await run(project, 'run it again');
      expect(second.status, second.statusReason).toBe('SUCCEEDED');
      expect(await logsOf(second.tasks[0].attempts[0].id)).toMatch(/worker: reusing environment [0-9a-f]{8} \(created [^)]+\) in \d+\.\ds/);
    },
  );

  it(
    'an import that no requirements file lists is named before the run, with the workers’ Python; nothing runs',
    { timeout: 60_000 },
    async () => {
      const job = await run(
        {
          'train.py': 'import progressbar_not_installed\nfrom helpers import f\nif __name__ == "__main__":\n    f()\n',
          'helpers.py': 'import requests_toolbelt_missing\ndef f():\n    pass\n',
        },
        'run it',
      );
      expect(job.status).toBe('FAILED');
      expect(job.statusReason).toMatch(
        /^The workers' Python \(3\.\d+\.\d+\) lacks progressbar_not_installed \(imported by train\.py\), requests_toolbelt_missing \(imported by helpers\.py\)\. No requirements file lists progressbar_not_installed, requests_toolbelt_missing: add them to requirements\.txt/,
      );
      expect(job.tasks).toEqual([]);
    },
  );
});
