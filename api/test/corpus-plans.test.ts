/**
 * Every project of the public corpus (api/test/fixtures/corpus/corpus.json, docs/corpus.md) planned by
 * the builtin planner with its request, against what the corpus expects — the exact settings
 * rewritten (file, old and new literal) or the command (any flag order), and every ask's
 * disposition — or the question or refusal it expects. Planning only (each job is cancelled once
 * planned); corpus-e2e.test.ts runs some of them to the end, `npm run corpus` all of them.
 * Skipped where the pinned upstream snapshots the corpus is laid out from are absent.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi } from './helpers/api.js';
import { corpusAvailable, judge, loadCorpus, materialise, type JobState } from './helpers/corpus.js';
import { startWorker } from './helpers/worker.js';

const corpus = loadCorpus();
const laid = corpusAvailable() ? materialise(corpus.map((e) => e.name)) : null;
// Snapshots present but incomplete on this machine: skipped, saying which.
if (laid && 'missing' in laid) console.warn(`corpus-plans skipped: the corpus could not be laid out here: ${laid.missing}`);
const available = !!laid && !('missing' in laid);
const api = available
  ? await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() })
  : null;

const JOB = `query($id: ID!) { job(id: $id) { id status statusReason
  currentPlan { command settings asks { ask kind status detail } environment pipeline }
  askOutcomes { ask kind status outcome line } openQuestions { text choices } outputs { path } tasks { name kind status } service { slug status } } }`;

function upload(dir: string): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  const walk = (d: string) => {
    for (const f of readdirSync(d)) {
      const p = path.join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (!f.startsWith('_make_data')) out[path.relative(dir, p)] = readFileSync(p);
    }
  };
  walk(dir);
  return out;
}

describe.skipIf(!available)('every corpus project, planned as the corpus expects (needs the upstream snapshots)', () => {
  let token = '';
  let stop: () => Promise<unknown> = async () => {};
  beforeAll(async () => {
    const user = await api!.signUp();
    token = user.token;
    const wt = await api!.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, token);
    const worker = await startWorker(api!.url, wt.data.createWorkerToken.token, 'corpus-planning', ['--python', '/usr/bin/python3']);
    stop = () => worker.stop();
  });
  afterAll(async () => {
    await stop();
    await api?.server.close();
  });

  for (const entry of corpus) {
    it(
      `${entry.name}: ${entry.expect.outcome === 'run' ? 'planned with every ask honoured' : entry.expect.outcome}`,
      { timeout: 120_000 },
      async () => {
        const manifest = [];
        for (const [p, content] of Object.entries(upload(path.join((laid as { root: string }).root, entry.dir))))
          manifest.push({ path: p, sha256: (await api!.putBlob(content, token)).sha256 });
        const created = await api!.gql(
          `mutation($i: CreateJobInput!) { createJob(input: $i) { __typename ... on Job { id } } }`,
          { i: { title: entry.name, request: entry.request, files: manifest } },
          token,
        );
        const id = created.data.createJob.id as string;
        let job: JobState;
        for (let i = 0; ; i++) {
          job = (await api!.gql(JOB, { id }, token)).data.job;
          if (job.currentPlan || ['FAILED', 'NEEDS_INPUT', 'SUCCEEDED', 'CANCELLED'].includes(job.status) || i > 400) break;
          await new Promise((r) => setTimeout(r, 250));
        }
        if (!['FAILED', 'NEEDS_INPUT', 'SUCCEEDED', 'CANCELLED'].includes(job.status))
          await api!.gql(`mutation($id: ID!) { cancelJob(id: $id) { __typename } }`, { id }, token);
        // Judged as if it had run (the run itself is corpus-e2e's): its plan, its asks' dispositions, or its question / refusal.
        const asPlanned: JobState =
          entry.expect.outcome === 'run' && job.currentPlan
            ? {
                ...job,
                status: 'SUCCEEDED',
                askOutcomes: job.currentPlan.asks.map((a) => ({
                  ask: a.ask,
                  outcome: a.status === 'honoured' ? 'done' : 'refused',
                  line: '',
                })),
              }
            : job;
        const { verdict, problems } = judge({
          entry,
          job: asPlanned,
          cliCode: 0,
          cliOut: '',
          probe: entry.expect.service?.probe ? { status: entry.expect.service.probe.status } : null,
          seconds: 0,
        });
        expect(
          problems,
          `${entry.name}: ${verdict} — ${job.status}: ${job.statusReason ?? ''}\n${JSON.stringify(job.currentPlan?.asks ?? job.openQuestions, null, 1).slice(0, 2000)}`,
        ).toEqual([]);
      },
    );
  }
});
