/**
 * The job page of the NVIDIA → AMD flow (issue 13), in a real browser: the real API with the
 * builtin planner and two real worker processes started with --simulate-accelerator (one
 * "NVIDIA", one "AMD"), examples/fused-gelu-mlp asked to "run this on an AMD GPU". Once the job
 * succeeded, the page shows each step of the preparation (reference on NVIDIA, the optimization
 * tried there, the migration validated on AMD) with its record, and every piece of work done on a
 * simulated accelerator says so — records, attempts, the log header — as the Workers page does.
 * (The flow's own assertions are in api/test/nvidia-to-amd-e2e.test.ts.)
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../../api/src/agents/builtin/builtinModel.js';
import { startWorker } from '../../api/test/helpers/worker.js';
import { rawId, ROOT, startDashboard } from './helpers/dashboard.js';

const NVIDIA = 'nvidia:RTX-4090:cuda-12.4:sm_89';
const AMD = 'amd:RX-6900-XT:rocm-5.2:gfx1030';
const WAIT = { timeout: 30_000 };

const d = await startDashboard({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const user = await d.signUp();
const wt = await d.gql(`mutation { createWorkerToken(input: {name: "sim"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
await startWorker(d.apiUrl, wt.data.createWorkerToken.token, 'sim-nvidia', ['--simulate-accelerator', NVIDIA]);
await startWorker(d.apiUrl, wt.data.createWorkerToken.token, 'sim-amd', ['--simulate-accelerator', AMD]);

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

describe('the job page of a job run on simulated NVIDIA and AMD workers', () => {
  it('shows each step with its record, labelled "simulated accelerator"', { timeout: 900_000 }, async () => {
    const manifest = [];
    for (const [p, content] of Object.entries(projectFiles(path.join(ROOT, 'examples/fused-gelu-mlp')))) manifest.push({ path: p, sha256: await d.putBlob(content, user.token) });
    const r = await d.gql(`mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`, { i: { title: 'fused-gelu-mlp on AMD', request: 'run this on an AMD GPU: train it for 2 epochs and give me the model', files: manifest } }, user.token);
    const id: string = r.data.createJob.id;
    for (let i = 0; ; i++) {
      const job = await d.prisma.job.findUniqueOrThrow({ where: { id: rawId(id) } });
      if (['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'].includes(job.status)) {
        expect(job.status, job.statusReason ?? '').toBe('SUCCEEDED');
        break;
      }
      if (i > 1600) throw new Error(`job still ${job.status}`);
      await new Promise((res) => setTimeout(res, 500));
    }

    const page = await d.page(user.token);
    await page.goto(`${d.url}/jobs/${id}`);
    await page.locator('h1 [data-status=SUCCEEDED]').waitFor(WAIT);
    const prep = page.locator('[data-testid=preparation]');
    await prep.waitFor(WAIT);
    const step = (name: string) => prep.locator(`[data-step=${name}] [data-testid=prep-record]`);
    await step('migrate').first().waitFor(WAIT);
    // 1. the reference on NVIDIA, 2. the optimization tried there, 3–4. the migration validated on AMD.
    expect(await step('reference').getAttribute('data-outcome')).toBe('ACCEPTED');
    expect(await step('reference').locator('[data-testid=simulated-accelerator]').textContent()).toBe(`simulated accelerator ${NVIDIA}`);
    expect(await step('reference').textContent()).toMatch(/unchanged code ran .* on sim-nvidia/);
    expect(await step('optimize').count()).toBe(1);
    expect(await step('optimize').locator('[data-testid=simulated-accelerator]').textContent()).toBe(`simulated accelerator ${NVIDIA}`);
    expect(await step('migrate').getAttribute('data-outcome')).toBe('ACCEPTED');
    expect(await step('migrate').locator('[data-testid=simulated-accelerator]').textContent()).toBe(`simulated accelerator ${AMD}`);
    expect(await step('migrate').textContent()).toMatch(/cuda-to-hip .* on sim-amd/);
    await step('migrate').getByText('Diff').click();
    expect(await step('migrate').locator('[data-testid=diff]').textContent()).toContain('#include <hip/hip_runtime.h>');

    // 5. the tasks: every attempt labelled with its worker's simulated class; the run on AMD.
    const tasks = page.locator('[data-testid=tasks]');
    const runRow = tasks.locator('tr', { hasText: 'sim-amd' }).last();
    await runRow.waitFor(WAIT);
    const badges = await tasks.locator('[data-testid=simulated-accelerator]').allTextContents();
    expect(badges.length).toBeGreaterThanOrEqual(6);
    expect(new Set(badges)).toEqual(new Set([`simulated accelerator ${NVIDIA}`, `simulated accelerator ${AMD}`]));

    // The Workers page says it too.
    await page.goto(`${d.url}/workers`);
    await page.locator('[data-worker=sim-amd] [data-testid=simulated-accelerator]').waitFor(WAIT);
    expect(await page.locator('[data-worker=sim-nvidia] [data-testid=simulated-accelerator]').textContent()).toBe(`simulated accelerator ${NVIDIA}`);
  });
});
