/**
 * What the real flow (realFlow.test.ts) cannot produce on demand, in a real browser
 * against the real API and PostgreSQL, with rows seeded through Prisma and announced
 * with the domain's own events: the API going away mid-run and coming back; agent steps
 * the builtin planner never takes (rejected, uncertain, still pending); many jobs
 * (pagination, filters); GPU workers and a network of several classes (this machine
 * has no GPU); API tokens; not-found and error states. Screenshots go to test-artifacts/
 * only: the README's come from the real flow.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { estimateFromSmokeRun, withActual } from '../../api/src/domain/jobs/estimate.js';
import {
  createJob,
  CPU_CAPS,
  NVIDIA_CAPS,
  screenshot,
  seedLogs,
  seedRunningAttempt,
  seedWorker,
  startDashboard,
} from './helpers/dashboard.js';

const d = await startDashboard();
const WAIT = { timeout: 15_000 };
const user = await d.signUp();

async function text(page: Page, selector: string) {
  return (await page.locator(selector).first().textContent()) ?? '';
}

describe('dashboard (seeded)', () => {
  it('renders every kind of agent step, and survives the API going away mid-run', async () => {
    const job = await createJob(d, user.token, 'Reconnect check');
    const worker = await seedWorker(d, user.userId, 'spare-cpu', CPU_CAPS, 'OFFLINE');
    const { attempt } = await seedRunningAttempt(d, job, user.userId, worker.id);
    // agent.item payloads exactly as api/src/agents/loop.ts records them.
    const runId = '7d1c3c1e-0000-4000-8000-000000000001';
    const item = (seq: number, p: Record<string, unknown>) => d.event(job.uuid, 'agent.item', { runId, agent: 'planner', seq, ...p });
    await d.event(job.uuid, 'agent.run', { runId, agent: 'planner', status: 'RUNNING', stopReason: null });
    await item(0, { type: 'reasoning', status: 'DONE', text: 'Two scripts could be the entry point.' });
    await item(1, { type: 'function_call', status: 'PENDING', name: 'read_file', callId: 'c1', arguments: '{"path":"train.py"}' });
    await item(2, { type: 'function_call_output', status: 'DONE', callId: 'c1', output: '{"content":"print(1)","truncated":false}' });
    await item(3, { type: 'function_call', status: 'PENDING', name: 'submit_plan', callId: 'c2', arguments: '{"command":"rm -rf /"}' });
    await item(4, {
      type: 'function_call_output',
      status: 'REJECTED',
      callId: 'c2',
      output: 'Error: the command leaves the project folder.',
    });
    await item(5, { type: 'function_call', status: 'PENDING', name: 'ask_user', callId: 'c3', arguments: '{"question":"Which one?"}' });
    await item(6, {
      type: 'function_call_output',
      status: 'UNCERTAIN',
      callId: 'c3',
      output: 'The call was interrupted; check before repeating it.',
    });
    await item(7, { type: 'function_call', status: 'PENDING', name: 'network_capacity', callId: 'c4', arguments: '{}' });
    await item(8, { type: 'message', status: 'DONE', role: 'assistant', text: 'I will run train.py.' });
    await item(9, { type: 'note', status: 'DONE', text: 'Resumed after a restart.' });

    const page = await d.page(user.token);
    await page.goto(`${d.url}/jobs/${encodeURIComponent(job.id)}`);
    const activity = page.locator('[data-testid=agent-activity]');
    await activity.locator('li[data-tool=read_file]').waitFor(WAIT);
    // Each call is one line of words (what was asked, what came back), oldest first; the JSON is behind a disclosure.
    expect(await activity.locator('[data-testid=tool-line]').allTextContents()).toEqual([
      'planner read train.py → 8 characters ',
      'planner submitted a plan → Error: the command leaves the project folder. rejected',
      'planner asked you: Which one? → The call was interrupted; check before repeating it. uncertain',
      'planner asked which workers the network has → waiting for the result… pending',
    ]);
    // A call with its pretty-printed arguments and, under it, its result.
    const read = activity.locator('li[data-tool=read_file]');
    expect(await read.locator('pre[data-label=Arguments]').isVisible()).toBe(false);
    await read.getByText('call as JSON').click();
    expect(await read.locator('pre[data-label=Arguments]').isVisible()).toBe(true);
    expect(await read.locator('pre[data-label=Arguments]').textContent()).toBe('{\n  "path": "train.py"\n}');
    expect(await read.locator('pre[data-label=Result]').textContent()).toContain('"content": "print(1)"');
    expect(await read.locator('[data-status]').count()).toBe(0);
    await activity.locator('li[data-tool=submit_plan] [data-status=REJECTED]').waitFor(WAIT);
    expect(await activity.locator('li[data-tool=submit_plan] pre[data-label=Result]').textContent()).toContain('leaves the project folder');
    await activity.locator('li[data-tool=ask_user] [data-status=UNCERTAIN]').waitFor(WAIT);
    await activity.locator('li[data-tool=network_capacity] [data-status=PENDING]').waitFor(WAIT);
    // Results are not listed twice; text items show their text.
    expect(await activity.locator('li[data-item=function_call_output]').count()).toBe(0);
    expect(await activity.locator('li[data-item=reasoning]').textContent()).toContain('Two scripts could be the entry point.');
    expect(await activity.locator('li[data-item=message]').textContent()).toMatch(/planner says\s*I will run train\.py\./);
    expect(await activity.locator('li[data-item=note]').textContent()).toContain('Resumed after a restart.');
    await screenshot(page, 'agent-activity');

    await seedLogs(d, job.uuid, attempt.id, 0, ['before the outage']);
    await page.getByText('1 line', { exact: true }).waitFor(WAIT);
    d.proxy.drop();
    await page.locator('[data-testid=connection-banner]').waitFor(WAIT);
    // Things happen while the browser cannot see them.
    await seedLogs(d, job.uuid, attempt.id, 1, ['during the outage 1', 'during the outage 2']);
    await d.event(job.uuid, 'finding', { text: 'Recorded while you were offline' });
    d.proxy.restore();
    await page.locator('[data-testid=connection-banner]').waitFor({ state: 'detached', ...WAIT });
    await page.getByText('3 lines').waitFor(WAIT);
    await activity.getByText('Finding: Recorded while you were offline').waitFor(WAIT);
    // And live updates flow again.
    await seedLogs(d, job.uuid, attempt.id, 3, ['after the outage']);
    await page.getByText('4 lines').waitFor(WAIT);
    await page.close();
  });

  it('lists jobs with status filter and pagination', async () => {
    // Rows only (the list is what is tested; createJob itself is tested by the real flow), a second apart.
    const t0 = Date.now();
    await d.prisma.job.createMany({
      data: [
        {
          ownerId: user.userId,
          title: 'Baseline',
          request: 'Run it',
          status: 'SUCCEEDED',
          createdAt: new Date(t0),
          finishedAt: new Date(t0 + 500),
        },
        ...Array.from({ length: 20 }, (_, i) => ({
          ownerId: user.userId,
          title: `Sweep ${String(i).padStart(2, '0')}`,
          request: 'Run it',
          status: 'PLANNING' as const,
          createdAt: new Date(t0 + (i + 1) * 1000),
        })),
      ],
    });
    const page = await d.page(user.token);
    await page.goto(`${d.url}/jobs`);
    await page.getByText('22 jobs').waitFor(WAIT);
    const rows = page.locator('table[aria-label=Jobs] tbody tr');
    expect(await rows.count()).toBe(20);
    expect(await rows.first().textContent()).toContain('Sweep 19');
    await page.getByRole('button', { name: 'Older →' }).click();
    await page.waitForURL(/after=/, WAIT);
    await page.getByText('Baseline').waitFor(WAIT);
    expect(await rows.count()).toBe(2);
    await page.getByRole('button', { name: '← Newer' }).click();
    await page.getByText('Sweep 19').waitFor(WAIT);
    await page.getByLabel('Status').selectOption('SUCCEEDED');
    await page.getByText('1 job with this status').waitFor(WAIT);
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('Baseline');
    await page.getByLabel('Status').selectOption('FAILED');
    await page.getByText('No jobs with this status.').waitFor(WAIT);
    await page.close();
  });

  it('shows GPU workers and the network by class; changes made elsewhere arrive live', async () => {
    await seedWorker(d, user.userId, 'rig-4090', NVIDIA_CAPS);
    await seedWorker(d, user.userId, 'office-cpu', CPU_CAPS);
    await seedWorker(d, user.userId, 'old-laptop', CPU_CAPS, 'OFFLINE');
    // Its trust record (domain/trust): 8 results confirmed by other owners' workers, one found wrong.
    await d.prisma.worker.updateMany({ where: { name: 'old-laptop' }, data: { validatedCount: 8, mismatchCount: 1, reputation: 9 / 15 } });
    // Someone else's GPU counts in the network overview, not in my list.
    const other = await d.signUp();
    await seedWorker(d, other.userId, 'their-4090', NVIDIA_CAPS);
    const page = await d.page(user.token);
    await page.goto(`${d.url}/workers`);
    const overview = page.locator('[data-testid=overview]');
    await overview.waitFor(WAIT);
    expect(await overview.locator('[data-class=nvidia]').textContent()).toMatch(/^NVIDIA GPU2 online/);
    expect(await overview.locator('[data-class=nvidia]').textContent()).toContain('NVIDIA GeForce RTX 4090');
    expect(await overview.locator('[data-class=none]').textContent()).toMatch(/^CPU only1 online/);
    expect(await page.locator('table[aria-label=Workers] tbody tr').count()).toBe(4); // spare-cpu from the first test, and these three
    const rig = page.locator('tr[data-worker="rig-4090"]');
    expect(await rig.textContent()).toContain('NVIDIA GeForce RTX 4090 · 24 GiB · cuda 12.4');
    expect(await rig.textContent()).toContain('PyTorch 2.3.0 (CUDA 12.1, CPU)');
    expect(await rig.locator('[data-testid=reputation]').textContent()).toBe('trust 0.50 · 0 confirmed · 0 wrong');
    expect(await page.locator('tr[data-worker="old-laptop"] [data-testid=reputation]').textContent()).toBe(
      'trust 0.60 · 8 confirmed · 1 wrong',
    );

    // A change made elsewhere arrives through workersChanged, and the network counts follow.
    const cpu = await d.prisma.worker.findFirstOrThrow({ where: { name: 'office-cpu' } });
    await d.prisma.worker.update({ where: { id: cpu.id }, data: { status: 'DRAINING' } });
    await d.server.pubsub.emit({ type: 'worker.changed', workerId: cpu.id, ownerId: user.userId });
    await page.locator('tr[data-worker="office-cpu"] [data-status=DRAINING]').waitFor(WAIT);
    await overview.locator('[data-class=none]').waitFor({ state: 'detached', ...WAIT });
    await screenshot(page, 'workers-gpu');

    // Drain from the page: the worker is DRAINING (it takes no work and hands its tasks back
    // with their checkpoints, api/test/drain-checkpoint.test.ts); Resume brings it back ONLINE.
    await rig.getByRole('button', { name: 'Drain' }).click();
    await rig.locator('[data-status=DRAINING]').waitFor(WAIT);
    expect((await d.prisma.worker.findFirstOrThrow({ where: { name: 'rig-4090' } })).status).toBe('DRAINING');
    expect(await rig.getByRole('button', { name: 'Drain' }).count()).toBe(0);
    await rig.getByRole('button', { name: 'Resume' }).click();
    await rig.locator('[data-status=ONLINE]').waitFor(WAIT);
    expect((await d.prisma.worker.findFirstOrThrow({ where: { name: 'rig-4090' } })).status).toBe('ONLINE');

    // A worker whose own check fails (UNHEALTHY) or that the scheduler quarantined says why.
    const laptop = await d.prisma.worker.findFirstOrThrow({ where: { name: 'old-laptop' } });
    const sick = 'the sandbox binary bwrap is missing or not executable (Debian/Ubuntu: apt-get install bubblewrap)';
    await d.prisma.worker.update({ where: { id: laptop.id }, data: { status: 'UNHEALTHY', statusReason: sick } });
    await d.server.pubsub.emit({ type: 'worker.changed', workerId: laptop.id, ownerId: user.userId });
    const row = page.locator('tr[data-worker="old-laptop"]');
    await row.locator('[data-status=UNHEALTHY]').waitFor(WAIT);
    expect(await row.locator('[data-testid=status-reason]').textContent()).toBe(sick);
    await d.prisma.worker.update({
      where: { id: laptop.id },
      data: {
        status: 'QUARANTINED',
        statusReason: 'Quarantined until 2026-12-07T03:00:00.000Z: 5 of its attempts failed on tasks of 3 jobs',
      },
    });
    await d.server.pubsub.emit({ type: 'worker.changed', workerId: laptop.id, ownerId: user.userId });
    await row.locator('[data-status=QUARANTINED]').waitFor(WAIT);
    expect(await row.locator('[data-testid=status-reason]').textContent()).toMatch(/^Quarantined until .*tasks of 3 jobs$/);
    await page.close();
  });

  it('creates and revokes API tokens', async () => {
    const page = await d.page(user.token);
    await page.goto(`${d.url}/tokens`);
    await page.getByText('No API tokens yet.').waitFor(WAIT);
    await page.getByLabel('New token name').fill('ci');
    await page.getByRole('button', { name: 'Create token' }).click();
    const shown = (await page.locator('[data-testid=new-token] code').textContent())!;
    const me = await d.gql(`{ me { email } }`, {}, shown);
    expect(me.data.me.email).toBe(user.email);
    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('No API tokens yet.').waitFor(WAIT);
    expect((await d.gql(`{ me { email } }`, {}, shown)).data.me).toBeNull();
    await page.close();
  });

  it('shows not-found and error states', async () => {
    const page = await d.page(user.token);
    await page.goto(`${d.url}/jobs/${encodeURIComponent(Buffer.from('Job:00000000-0000-0000-0000-000000000000').toString('base64'))}`);
    await page.getByRole('heading', { name: 'Job not found' }).waitFor(WAIT);
    expect(await text(page, '.state')).toContain('not yours');
    await page.goto(`${d.url}/nowhere`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor(WAIT);
    // A revoked session goes back to sign-in.
    const stale = await d.page('cgs_not_a_real_token');
    await stale.goto(`${d.url}/jobs`);
    await stale.waitForURL(/\/login/, WAIT);
    await page.close();
    await stale.close();
  });

  it("shows the full run's estimate from its smoke run beside the cost, and after the run how far off it was", async () => {
    const job = await createJob(d, user.token, 'Estimated run');
    const worker = await seedWorker(d, user.userId, 'smoke-cpu', CPU_CAPS, 'ONLINE');
    // The estimate exactly as the job engine computes and stores it (jobs/estimate.ts).
    const base = estimateFromSmokeRun(
      d.server.resources,
      {
        usage: { runSeconds: 12, runStartedAt: Date.parse('2026-12-03T10:00:00Z'), peakMemoryMiB: 412 },
        outputs: [{ size: 2048 }],
        points: [1, 2].map((step) => ({ name: 'loss', step, ts: new Date(Date.parse('2026-12-03T10:00:02Z') + step * 5000) })),
        worker,
        task: { requirements: {}, accelVendor: null },
      },
      { unit: 'epoch', bounded: 2, full: 20 },
    )!;
    await d.prisma.job.update({ where: { id: job.uuid }, data: { estimate: withActual(base, 118, 0.0021) as never } });
    await d.jobUpdated(job.uuid);
    const page = await d.page(user.token);
    await page.goto(`${d.url}/jobs/${encodeURIComponent(job.id)}`);
    const shown = page.locator('[data-testid=estimate]');
    await shown.waitFor(WAIT);
    expect(await shown.textContent()).toMatch(/Estimate of the full run: about 1m 42s \(1m 22s–2m 7s\), CA\$/);
    expect(await shown.textContent()).toContain(
      'Smoke run on smoke-cpu: 2 of 20 epochs in 12 s, peak memory 412 MiB (sampled); 5.0 s per step from its progress metrics, start-up 2.0 s, ×10.',
    );
    expect(await page.locator('[data-testid=estimate-actual]').textContent()).toMatch(/^It took 1m 58s \([\d.]+× the estimate\)\.$/);
    await page.close();
  });

  it("shows what re-running sampled results on other owners' workers cost, within the cost", async () => {
    const job = await createJob(d, user.token, 'Checked run');
    const worker = await seedWorker(d, user.userId, 'check-cpu', CPU_CAPS, 'ONLINE');
    const code = await d.prisma.codeVersion.findFirstOrThrow({ where: { jobId: job.uuid } });
    // A replica of the run (domain/trust) that ran and was billed, as the engine records it.
    const task = await d.prisma.task.create({
      data: {
        jobId: job.uuid,
        ownerId: user.userId,
        kind: 'PROBE',
        role: 'REPLICA',
        name: 'replica:run',
        codeVersionId: code.id,
        command: 'python train.py',
        status: 'SUCCEEDED',
      },
    });
    const attempt = await d.prisma.attempt.create({
      data: { taskId: task.id, number: 1, workerId: worker.id, fencingToken: 'f', leaseExpiresAt: new Date(), status: 'SUCCEEDED' },
    });
    await d.prisma.usageEntry.create({
      data: {
        jobId: job.uuid,
        attemptId: attempt.id,
        periodStart: new Date(Date.now() - 60_000),
        periodEnd: new Date(),
        cpuCoreHours: 0.1,
        ramGbHours: 0.1,
        accelHours: 0,
        costCad: 0.0123,
      },
    });
    await d.prisma.job.update({ where: { id: job.uuid }, data: { costCad: 0.0123 } });
    await d.jobUpdated(job.uuid);
    const page = await d.page(user.token);
    await page.goto(`${d.url}/jobs/${encodeURIComponent(job.id)}`);
    const shown = page.locator('[data-testid=replication-cost]');
    await shown.waitFor(WAIT);
    expect(await shown.textContent()).toBe(
      "CA$0.0123 of it re-ran sampled results on other owners' workers to check them (in the cost and the cap).",
    );
    await page.close();
  });

  it("shows what the agents' model calls cost, within the cost", async () => {
    const job = await createJob(d, user.token, 'Planned by a model');
    // As domain/billing/agentUsage.ts records a billed model call.
    const run = await d.prisma.agentRun.create({
      data: { jobId: job.uuid, agent: 'planner', model: 'openai:gpt-5-mini', status: 'COMPLETED' },
    });
    await d.prisma.agentUsage.create({
      data: { jobId: job.uuid, runId: run.id, model: run.model, inputTokens: 20_000, outputTokens: 1_500, costCad: 0.0112 },
    });
    await d.prisma.job.update({ where: { id: job.uuid }, data: { costCad: 0.0112, agentCostCad: 0.0112 } });
    await d.jobUpdated(job.uuid);
    const page = await d.page(user.token);
    await page.goto(`${d.url}/jobs/${encodeURIComponent(job.id)}`);
    const shown = page.locator('[data-testid=agent-cost]');
    await shown.waitFor(WAIT);
    expect(await shown.textContent()).toBe(
      "CA$0.0112 of it paid for the agents' model calls (planning and supervision; in the cost and the cap).",
    );
    await page.close();
  });
});
