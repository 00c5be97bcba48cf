/**
 * The request is the contract (DESIGN.md invariant 12), end to end: `chatgpu submit DIR -m "…"
 * --wait` against the builtin planner and a real sandboxed worker. Settings that are module
 * constants (no flags) are changed by a set-settings rewrite of exactly their literals; a sweep of
 * a literal inside an expression runs once per value with a table; figures of a program that only
 * calls plt.show() come back; an ask the project cannot honour stops the job before anything runs,
 * naming what it has. Every ask's disposition is in the plan and in the job's final summary.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi } from './helpers/api.js';
import { runCli } from './helpers/cli.js';
import { startWorker } from './helpers/worker.js';

const api = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
const worker = await startWorker(api.url, wt.data.createWorkerToken.token, 'cpu-box');
afterAll(async () => {
  await worker.stop();
  await api.server.close();
});

const JOB = `query($id: ID!) { job(id: $id) { status statusReason currentPlan { command settings asks { ask kind status detail } environment } askOutcomes { ask outcome line }
  outputs { path } tasks { name kind status } preparationRecords { step kind outcome reason evidenceSha } frozenCode { origin } } }`;

const home = mkdtempSync(path.join(tmpdir(), 'cli-home-'));
const cliEnv = {
  HOME: home,
  XDG_CONFIG_HOME: path.join(home, '.config'),
  CHATGPU_DATA_DIR: path.join(home, 'no-data'),
  CHATGPU_TOKEN: user.token,
};

async function submitWait(project: string, request: string) {
  const dir = path.join(import.meta.dirname, 'fixtures/projects', project);
  const out = mkdtempSync(path.join(tmpdir(), 'asks-out-'));
  const r = await runCli(['submit', dir, '-m', request, '--wait', '--out', out, '--server', api.url], {
    env: cliEnv,
    input: '',
    timeoutMs: 170_000,
  });
  const row = await api.server.db.prisma.job.findFirstOrThrow({ where: { title: project }, orderBy: { createdAt: 'desc' } });
  const id = Buffer.from(`Job:${row.id}`).toString('base64');
  const job = (await api.gql(JOB, { id }, user.token)).data.job;
  return { ...job, out, stdout: r.stdout, stderr: r.stderr, exitCode: r.code };
}

describe('settings, sweeps, outputs and refusals as the user asked', () => {
  it(
    'module constants with no flag: exactly those literals rewritten (set-settings, with its evidence), the model handed back, each ask done',
    { timeout: 180_000 },
    async () => {
      const job = await submitWait(
        'gpt-constants',
        'train it for 20 iterations with a tiny model (n_embd 16, 2 layers) and give me the model',
      );
      expect(job.status, `${job.statusReason}\n${job.stderr}`).toBe('SUCCEEDED');
      expect(job.currentPlan.command).toBe('python train.py');
      expect(job.currentPlan.settings.map((e: any) => [e.name, e.from, e.to])).toEqual([
        ['max_iters', '5000', '20'],
        ['n_embd', '384', '16'],
        ['n_layer', '6', '2'],
      ]);
      expect(job.frozenCode.origin).toBe('set-settings');
      expect(job.preparationRecords).toEqual([
        expect.objectContaining({
          step: 'set-settings',
          kind: 'settings',
          outcome: 'ACCEPTED',
          evidenceSha: expect.stringMatching(/^[0-9a-f]{64}$/),
        }),
      ]);
      expect(job.currentPlan.asks.map((a: any) => [a.ask, a.status])).toEqual([
        ['20 iterations', 'honoured'],
        ['n_embd 16', 'honoured'],
        ['2 layers', 'honoured'],
        ['the model', 'honoured'],
      ]);
      expect(job.askOutcomes.map((a: any) => a.outcome)).toEqual(['done', 'done', 'done', 'done']);
      expect(job.outputs.map((o: any) => o.path)).toContain('outputs/model.pt');
      // The run trained the small model for 20 steps: its last log line says step 19.
      const logs = await api.server.db.prisma.logChunk.findMany({
        where: {
          attempt: {
            task: {
              jobId: (
                await api.server.db.prisma.job.findFirstOrThrow({ where: { title: 'gpt-constants' }, orderBy: { createdAt: 'desc' } })
              ).id,
              name: 'run',
            },
          },
        },
        orderBy: { seq: 'asc' },
      });
      const text = logs.map((l) => l.text).join('\n');
      expect(text).toContain('step 19: loss');
      expect(text).not.toContain('step 20:');
      // n_embd 16, 2 layers: 2 × (LayerNorm 32 + 16·64+64 + 64·16+16) + embeddings/head for the vocabulary.
      expect(text).toMatch(/^\d{4,5} parameters$/m);
      // The final summary lists each ask with its outcome.
      expect(job.stdout + job.stderr).toMatch(
        /What you asked:[\s\S]*✓ "20 iterations": done — set-settings: max_iters = 20 in train\.py line \d+ \(was 5000\)/,
      );
    },
  );

  it(
    'a sweep of a literal inside an expression (dt = 0.4*dx*dx) at three values, with the figures of a plt.show() program: one run per value, outputs apart, a table',
    { timeout: 180_000 },
    async () => {
      const job = await submitWait('heat-sweep', 'sweep dt over 0.4, 0.2 and 0.1 and give me the figures');
      expect(job.status, `${job.statusReason}\n${job.stderr}`).toBe('SUCCEEDED');
      expect(job.currentPlan.command).toMatch(
        /^python -m chatgpu\.sweep run --name dt --value 0\.4 --set heat\.py:8:5:8:8:[\w-]+ -- python heat\.py && .*--value 0\.2 .*--value 0\.1 .* && python -m chatgpu\.sweep table \. outputs\/sweep\.csv$/,
      );
      expect(job.currentPlan.environment).toMatchObject({ CHATGPU_FIGURES: 'outputs/figures' });
      expect(job.currentPlan.asks.map((a: any) => [a.ask, a.status])).toEqual([
        ['sweep dt over 0.4, 0.2 and 0.1', 'honoured'],
        ['the figures', 'honoured'],
      ]);
      const paths = job.outputs.map((o: any) => o.path);
      for (const v of ['0.4', '0.2', '0.1']) {
        expect(paths).toContain(`outputs/sweep/dt=${v}/stdout.txt`);
        expect(paths).toContain(`outputs/sweep/dt=${v}/figures/figure-1.png`);
      }
      expect(paths).toContain('outputs/sweep.csv');
      // The uploaded script is an input, never an output; and it was not changed by the sweep.
      expect(paths).not.toContain('heat.py');
      const { readFileSync } = await import('node:fs');
      const table = readFileSync(path.join(job.out, 'outputs/sweep.csv'), 'utf8').trim().split('\n');
      expect(table[0]).toBe('dt,error,r,steps,exit_code');
      expect(table.slice(1).map((l) => l.split(',')[0])).toEqual(['0.1', '0.2', '0.4']);
      // r = dt/dx² is the swept literal itself, and halving dt doubles the steps.
      expect(table.slice(1).map((l) => [l.split(',')[2], l.split(',')[3]])).toEqual([
        ['0.1', '800'],
        ['0.2', '400'],
        ['0.4', '200'],
      ]);
    },
  );

  it(
    'an ask the project has no setting for is refused before anything runs, naming the settings it has; nothing ran',
    { timeout: 120_000 },
    async () => {
      const job = await submitWait('gpt-constants', 'train it for 20 iterations with weight decay 0.1');
      expect(job.status).toBe('FAILED');
      expect(job.statusReason).toMatch(
        /^Not run: "weight decay 0\.1" — train\.py has no setting for "weight decay"; its settings are: .*learning_rate/,
      );
      expect(job.statusReason).toContain('Understood: "20 iterations"');
      expect(job.tasks).toEqual([]);
      expect(job.exitCode).not.toBe(0);
    },
  );
});
