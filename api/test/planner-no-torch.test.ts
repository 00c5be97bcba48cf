/**
 * A network whose only worker has no PyTorch (its Python is started without site packages):
 * a torch job is explained before anything runs — never a question whose answers lead
 * nowhere, never a crash at run time — and a plain Python job still runs there.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi } from './helpers/api.js';
import { startWorker } from './helpers/worker.js';

// Debian's interpreter with `-S`: no dist-packages, so no torch and no numpy.
const bare = path.join(mkdtempSync(path.join(tmpdir(), 'bare-python-')), 'python3');
writeFileSync(bare, '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n');
chmodSync(bare, 0o755);

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
await startWorker(api.url, wt.data.createWorkerToken.token, 'no-torch', ['--python', bare]);

async function submit(files: Record<string, string>, request: string) {
  const manifest = [];
  for (const [p, content] of Object.entries(files)) manifest.push({ path: p, sha256: (await api.putBlob(content, user.token)).sha256 });
  const r = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } } }`,
    { i: { title: 'job', request, files: manifest } },
    user.token,
  );
  const id = r.data.createJob.id as string;
  const end = Date.now() + 60_000;
  for (;;) {
    const job = (
      await api.gql(
        `query($id: ID!) { job(id: $id) { status statusReason openQuestions { text } tasks { kind status } } }`,
        { id },
        user.token,
      )
    ).data.job;
    if (['SUCCEEDED', 'FAILED', 'NEEDS_INPUT'].includes(job.status)) return job;
    if (Date.now() > end) throw new Error(`timed out: ${JSON.stringify(job)}`);
    await new Promise((res) => setTimeout(res, 250));
  }
}

describe('a network without PyTorch', () => {
  it('explains a torch job before it runs, even with a pin it could have asked about', async () => {
    const job = await submit(
      { 'requirements.txt': 'torch>=2.1\n', 'train.py': 'import torch\nif __name__ == "__main__":\n    print(torch.zeros(2))\n' },
      'train it',
    );
    expect(job.status).toBe('FAILED');
    expect(job.openQuestions).toEqual([]);
    expect(job.statusReason).toMatch(
      /imports torch \(requirements\.txt pins torch>=2\.1\), but no online worker has PyTorch .*apt-get install python3-torch.*--python PATH/,
    );
    expect(job.tasks).toEqual([]);
  });

  it('still runs a plain Python job there', async () => {
    const job = await submit(
      { 'sim.py': 'import random\nif __name__ == "__main__":\n    random.seed(0)\n    print(sum(random.random() for _ in range(1000)))\n' },
      'run it',
    );
    expect(job.status, job.statusReason).toBe('SUCCEEDED');
    expect(job.tasks).toEqual([{ kind: 'RUN', status: 'SUCCEEDED' }]);
  });
});
