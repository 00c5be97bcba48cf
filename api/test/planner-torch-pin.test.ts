/**
 * A torch pin that only some online workers meet: the builtin planner plans the run for those
 * (hardware.minTorch, enforced by the claim) instead of asking, and the run lands on a worker
 * whose torch meets the pin although an older one is online and idle.
 *
 * Two real workers: 'old' runs Debian's torch 1.13; 'new' runs the same interpreter through a
 * wrapper whose sitecustomize makes `torch.__version__` read 2.4.0 (the probe sees a 2.4
 * worker; no torch 2.x can be installed here).
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { chosenPython } from '../src/domain/workers/torchVersion.js';
import { startTestApi } from './helpers/api.js';
import { startWorker } from './helpers/worker.js';

const dir = mkdtempSync(path.join(tmpdir(), 'torch-2.4-python-'));
writeFileSync(
  path.join(dir, 'sitecustomize.py'),
  `import importlib.abc, importlib.machinery, sys


class _Torch24(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            module.__version__ = "2.4.0"

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _Torch24())
`,
);
const newer = path.join(dir, 'python3');
writeFileSync(newer, `#!/bin/sh\nPYTHONPATH=${dir} exec /usr/bin/python3 "$@"\n`);
chmodSync(newer, 0o755);

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const user = await api.signUp();
async function worker(name: string, python: string) {
  const wt = await api.gql(
    `mutation($n: String!) { createWorkerToken(input: {name: $n}) { ... on CreatedWorkerToken { token } } }`,
    { n: name },
    user.token,
  );
  await startWorker(api.url, wt.data.createWorkerToken.token, name, ['--python', python]);
}
await worker('old', '/usr/bin/python3');
await worker('new', newer);

async function waitForWorkers(n: number) {
  const end = Date.now() + 60_000;
  while ((await api.server.db.prisma.worker.count({ where: { status: 'ONLINE' } })) < n) {
    if (Date.now() > end) throw new Error('workers did not come online');
    await new Promise((res) => setTimeout(res, 200));
  }
}

describe('a torch pin only some workers meet', () => {
  it(
    'plans the run for the workers that meet it (no question) and it runs on one of them, not on the idle older one',
    { timeout: 120_000 },
    async () => {
      await waitForWorkers(2);
      const caps = await api.server.db.prisma.worker.findMany({ select: { name: true, capabilities: true } });
      expect(caps.map((w) => [w.name, chosenPython(w.capabilities)?.torch?.version]).sort()).toEqual([
        ['new', '2.4.0'],
        ['old', expect.stringMatching(/^1\.13/)],
      ]);
      const files = {
        'requirements.txt': 'torch>=2.1\n',
        'train.py': 'import torch\nif __name__ == "__main__":\n    open("outputs/done.txt", "w").write("ok")\n    print("trained")\n',
      };
      const manifest = [];
      for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
      const r = await api.gql(
        `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } } }`,
        { i: { title: 'pinned', request: 'train it', files: manifest } },
        user.token,
      );
      const id = r.data.createJob.id as string;
      const end = Date.now() + 100_000;
      let job: any;
      for (;;) {
        job = (
          await api.gql(
            `query($id: ID!) { job(id: $id) { status statusReason openQuestions { text } currentPlan { summary requirements } tasks { kind status attempts { workerName } } } }`,
            { id },
            user.token,
          )
        ).data.job;
        if (['SUCCEEDED', 'FAILED', 'NEEDS_INPUT'].includes(job.status)) break;
        if (Date.now() > end) throw new Error(`timed out: ${JSON.stringify(job)}`);
        await new Promise((res) => setTimeout(res, 250));
      }
      expect(job.status, `${job.statusReason} ${JSON.stringify(job.openQuestions)}`).toBe('SUCCEEDED');
      expect(job.currentPlan.requirements).toMatchObject({ workload: 'torch-cpu', minTorch: '2.1' });
      expect(job.currentPlan.summary).toMatch(/Only workers with torch ≥ 2\.1 take it \(requirements\.txt pins torch>=2\.1; online: /);
      expect(job.tasks.map((t: any) => [t.kind, t.status, t.attempts.map((a: any) => a.workerName)])).toEqual([
        ['RUN', 'SUCCEEDED', ['new']],
      ]);
    },
  );
});
