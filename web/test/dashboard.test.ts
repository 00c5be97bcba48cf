/**
 * The dashboard in a real browser against the real API and PostgreSQL: sign up, submit a
 * job by dropping files, watch it live (status, timeline, logs, metrics, agent activity,
 * a question answered inline, cost), download an output and compare bytes, survive an
 * API disconnect, list and filter jobs, manage workers and tokens. Screenshots of the
 * main pages go to test-artifacts/ and docs/screenshots/.
 */
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  createJob,
  CPU_CAPS,
  NVIDIA_CAPS,
  rawId,
  screenshot,
  seedLogs,
  seedMetrics,
  seedRunningAttempt,
  seedWorker,
  startDashboard,
} from './helpers/dashboard.js';

const d = await startDashboard();
const WAIT = { timeout: 15_000 };

async function text(page: Page, selector: string) {
  return (await page.locator(selector).first().textContent()) ?? '';
}

describe('dashboard', () => {
  let token = '';
  let userId = '';
  let jobGlobalId = '';

  it('signs up through the form and lands on an empty jobs list', async () => {
    const page = await d.page(null);
    await page.goto(`${d.url}/jobs`);
    await page.waitForURL(/\/login\?next=%2Fjobs/, WAIT);
    await page.getByRole('link', { name: 'Create an account' }).click();
    const email = `ada${Date.now()}@example.com`;
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.waitForURL(/\/jobs$/, WAIT);
    await page.getByText('No jobs yet.').waitFor(WAIT);
    expect(await text(page, '[data-testid=me]')).toBe(email);
    token = (await page.evaluate(() => localStorage.getItem('chatgpu.token')))!;
    const me = await d.gql(`{ me { id } }`, {}, token);
    userId = rawId(me.data.me.id);
    expect(userId).toMatch(/^[0-9a-f-]{36}$/);
    await page.close();
  });

  it('creates a job by dropping files, shows the tree and upload progress, then opens the job page', async () => {
    const page = await d.page(token);
    await page.goto(`${d.url}/jobs/new`);
    // A drop of three files (synthetic DataTransfer: the page reads dt.files).
    await page.locator('[data-testid=dropzone]').waitFor(WAIT);
    await page.evaluate(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['import torch\nprint("training")\n'], 'train.py'));
      dt.items.add(new File(['torch==2.3\n'], 'requirements.txt'));
      dt.items.add(new File([new Uint8Array(3000)], 'data.bin'));
      const zone = document.querySelector('[data-testid=dropzone]')!;
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    await page.getByText('3 files, 3.0 KiB').waitFor(WAIT);
    const tree = await text(page, '[role=tree]');
    expect(tree).toContain('train.py');
    expect(tree).toContain('requirements.txt');
    await page.getByLabel('Title').fill('MNIST classifier');
    await page.getByLabel(/What should happen/).fill('Train the model for 3 epochs and give me the checkpoint.');
    await page.getByLabel(/Spending cap/).fill('5');
    await page.getByLabel('Hardware preference').selectOption('nvidia');
    await screenshot(page, 'new-job', { docs: true });
    await page.getByRole('button', { name: 'Submit job' }).click();
    await page.waitForURL(/\/jobs\/(?!new$)[^/]+$/, WAIT);
    jobGlobalId = decodeURIComponent(page.url().split('/jobs/')[1]!);
    await page.getByRole('heading', { name: /MNIST classifier/ }).waitFor(WAIT);
    // What the API stored is exactly what was dropped.
    const r = await d.gql(
      `query($id: ID!) { job(id: $id) { title spendingCapCad hardwarePreference originalCode { files { path size } } } }`,
      { id: jobGlobalId },
      token,
    );
    expect(r.data.job.title).toBe('MNIST classifier');
    expect(r.data.job.spendingCapCad).toBe(5);
    expect(r.data.job.hardwarePreference).toBe('nvidia');
    expect(r.data.job.originalCode.files.map((f: { path: string }) => f.path).sort()).toEqual(['data.bin', 'requirements.txt', 'train.py']);
    expect(r.data.job.originalCode.files.find((f: { path: string }) => f.path === 'data.bin').size).toBe(3000);
    await page.close();
  });

  it('shows the job live: question answered inline, status, timeline, agent steps, logs, metrics, cost, outputs', async () => {
    const jobId = rawId(jobGlobalId);
    const page = await d.page(token);
    await page.goto(`${d.url}/jobs/${encodeURIComponent(jobGlobalId)}`);
    await page.locator('[data-testid=timeline] li[data-kind="job.created"]').waitFor(WAIT);
    await page.getByText('No tasks yet').waitFor(WAIT);

    // The planner asks a question: the job waits in NEEDS_INPUT and the form appears.
    const q = await d.prisma.question.create({ data: { jobId, text: 'Which dataset split should I use for validation?', choices: ['10%', '20%'] } });
    await d.prisma.job.update({ where: { id: jobId }, data: { status: 'NEEDS_INPUT', statusReason: 'Waiting for your answer.' } });
    await d.event(jobId, 'agent.item', { agent: 'planner', type: 'function_call', name: 'list_files', arguments: '{"path":"."}', result: { files: ['train.py'] } });
    await d.event(jobId, 'question.asked', { questionId: q.id, text: q.text });
    await d.event(jobId, 'job.status', { status: 'NEEDS_INPUT' });
    await d.jobUpdated(jobId);
    const form = page.locator('[data-testid=question-form]');
    await form.waitFor(WAIT);
    await page.locator('[data-status=NEEDS_INPUT]').first().waitFor(WAIT);
    expect(await text(page, '[data-testid=agent-activity]')).toContain('planner · function call list_files');
    await form.getByLabel('20%').check();
    await form.getByRole('button', { name: 'Send answer' }).click();
    await form.waitFor({ state: 'detached', ...WAIT });
    const answered = await d.prisma.question.findUniqueOrThrow({ where: { id: q.id } });
    expect(answered).toMatchObject({ status: 'ANSWERED', answer: '20%' });
    expect((await d.prisma.job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe('PLANNING');
    await page.locator('h1 [data-status=PLANNING]').waitFor(WAIT);

    // A plan, a worker, a running attempt.
    const plan = await d.prisma.plan.create({
      data: {
        jobId, version: 1, author: 'builtin', summary: 'Train MNIST for 3 epochs on one NVIDIA GPU.', steps: ['install requirements', 'run train.py'],
        command: 'python train.py --epochs 3', requirements: { accelVendor: 'nvidia', minAccelMemoryMiB: 4096 }, outputs: ['model.pt'],
        acceptanceCriteria: { accuracy: '>= 0.97' },
      },
    });
    await d.prisma.job.update({ where: { id: jobId }, data: { currentPlanId: plan.id } });
    await d.event(jobId, 'plan.created', { version: 1, author: 'builtin', summary: plan.summary });
    const worker = await seedWorker(d, userId, 'rig-4090', NVIDIA_CAPS);
    const job = { uuid: jobId, codeVersionId: (await d.prisma.codeVersion.findFirstOrThrow({ where: { jobId } })).id };
    const { attempt } = await seedRunningAttempt(d, job, userId, worker.id);
    await page.locator('h1 [data-status=RUNNING]').waitFor(WAIT);
    expect(await text(page, '[data-testid=plan]')).toContain('python train.py --epochs 3');
    await page.locator(`[data-attempt="${attempt.id}"]`).waitFor(WAIT);

    // Logs and metrics stream in.
    const viewport = page.locator('[data-testid=log-viewport]');
    await viewport.waitFor(WAIT);
    for (let b = 0; b < 3; b++) {
      await seedLogs(d, jobId, attempt.id, b * 40, Array.from({ length: 40 }, (_, i) => `epoch ${b + 1} step ${i} loss ${(2 / (b * 40 + i + 1)).toFixed(4)}`));
      await seedMetrics(d, jobId, attempt.id, Array.from({ length: 40 }, (_, i) => [
        { seq: b * 40 + i, name: 'loss', step: b * 40 + i, value: 2 / (b * 40 + i + 1) },
        { seq: b * 40 + i, name: 'gpu_util', step: b * 40 + i, value: 80 + (i % 7) },
      ]).flat());
    }
    await seedLogs(d, jobId, attempt.id, 120, ['CUDA warning: falling back to TF32'], 'stderr');
    await page.getByText('121 lines').waitFor(WAIT);
    expect(await viewport.locator('[data-seq="120"]').textContent()).toContain('falling back to TF32');
    await page.locator('[data-testid=chart-loss] canvas').first().waitFor(WAIT);
    await page.locator('[data-testid=chart-gpu_util]').getByText('120 points').waitFor(WAIT);

    // Search filters lines.
    await page.getByLabel('Search the log').fill('epoch 2 step 1');
    await page.getByText('11 matching of 121 lines').waitFor(WAIT);
    await page.getByLabel('Search the log').fill('');

    // Cost so far.
    await d.prisma.job.update({ where: { id: jobId }, data: { costCad: 1.25 } });
    await d.jobUpdated(jobId);
    await page.locator('[data-testid=cost]').getByText('CA$1.25').waitFor(WAIT);
    expect(await page.getByRole('progressbar', { name: 'Cost against cap' }).getAttribute('aria-valuenow')).toBe('25');
    await screenshot(page, 'job-running', { docs: true });

    // The attempt succeeds with an output; download it and compare bytes.
    const model = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));
    const sha = await d.putBlob(model, token);
    await d.prisma.attempt.update({
      where: { id: attempt.id },
      data: { status: 'SUCCEEDED', exitCode: 0, finishedAt: new Date(), outputs: [{ path: 'out/model.pt', sha256: sha, size: model.length, mode: 420 }] },
    });
    await d.prisma.task.updateMany({ where: { jobId }, data: { status: 'SUCCEEDED', finishedAt: new Date() } });
    await d.prisma.job.update({ where: { id: jobId }, data: { status: 'SUCCEEDED', finishedAt: new Date() } });
    await d.event(jobId, 'attempt.status', { attemptId: attempt.id, number: 1, workerName: 'rig-4090', status: 'SUCCEEDED' });
    await d.event(jobId, 'job.status', { status: 'SUCCEEDED' });
    await d.jobUpdated(jobId);
    const dl = page.getByRole('button', { name: 'Download out/model.pt' });
    await dl.waitFor(WAIT);
    const [download] = await Promise.all([page.waitForEvent('download'), dl.click()]);
    expect(download.suggestedFilename()).toBe('model.pt');
    expect(Buffer.compare(await readFile((await download.path())!), model)).toBe(0);
    await page.locator('h1 [data-status=SUCCEEDED]').waitFor(WAIT);
    expect(await page.getByRole('button', { name: 'Cancel job' }).count()).toBe(0);
    const timeline = await text(page, '[data-testid=timeline]');
    expect(timeline).toContain('Job succeeded');
    expect(timeline).toContain('Answered: 20%');
    await page.close();
  });

  it('shows a banner when the API goes away and catches up after it returns', async () => {
    const job = await createJob(d, token, 'Reconnect check');
    const worker = await seedWorker(d, userId, 'spare-cpu', CPU_CAPS, 'OFFLINE');
    const { attempt } = await seedRunningAttempt(d, job, userId, worker.id);
    const page = await d.page(token);
    await page.goto(`${d.url}/jobs/${encodeURIComponent(job.id)}`);
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
    await page.locator('[data-testid=agent-activity]').getByText('Finding: Recorded while you were offline').waitFor(WAIT);
    // And live updates flow again.
    await seedLogs(d, job.uuid, attempt.id, 3, ['after the outage']);
    await page.getByText('4 lines').waitFor(WAIT);
    await page.close();
  });

  it('lists jobs with status filter and pagination', async () => {
    for (let i = 0; i < 20; i++) await createJob(d, token, `Sweep ${String(i).padStart(2, '0')}`);
    const page = await d.page(token);
    await page.goto(`${d.url}/jobs`);
    await page.getByText('22 jobs').waitFor(WAIT);
    const rows = page.locator('table[aria-label=Jobs] tbody tr');
    expect(await rows.count()).toBe(20);
    expect(await rows.first().textContent()).toContain('Sweep 19');
    await screenshot(page, 'jobs-list', { docs: true });
    await page.getByRole('button', { name: 'Older →' }).click();
    await page.waitForURL(/after=/, WAIT);
    await page.getByText('MNIST classifier').waitFor(WAIT);
    expect(await rows.count()).toBe(2);
    await page.getByRole('button', { name: '← Newer' }).click();
    await page.getByText('Sweep 19').waitFor(WAIT);
    await page.getByLabel('Status').selectOption('SUCCEEDED');
    await page.getByText('1 job with this status').waitFor(WAIT);
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('MNIST classifier');
    await page.getByLabel('Status').selectOption('FAILED');
    await page.getByText('No jobs with this status.').waitFor(WAIT);
    await page.close();
  });

  it('manages workers: overview by class, capabilities, pause and resume, add a worker', async () => {
    await seedWorker(d, userId, 'office-cpu', CPU_CAPS);
    await seedWorker(d, userId, 'old-laptop', CPU_CAPS, 'OFFLINE');
    const page = await d.page(token);
    await page.goto(`${d.url}/workers`);
    const overview = page.locator('[data-testid=overview]');
    await overview.waitFor(WAIT);
    expect(await overview.locator('[data-class=nvidia]').textContent()).toContain('1 online of 1');
    expect(await overview.locator('[data-class=cpu]').textContent()).toContain('1 online of 3');
    const rig = page.locator('tr[data-worker="rig-4090"]');
    expect(await rig.textContent()).toContain('NVIDIA GeForce RTX 4090 · 24 GiB · cuda 12.4');
    expect(await rig.textContent()).toContain('PyTorch 2.3.0 (CUDA 12.1, CPU)');

    await rig.getByRole('button', { name: 'Pause' }).click();
    await rig.locator('[data-status=PAUSED]').waitFor(WAIT);
    expect((await d.prisma.worker.findFirstOrThrow({ where: { name: 'rig-4090' } })).status).toBe('PAUSED');
    await rig.getByRole('button', { name: 'Resume' }).click();
    await rig.locator('[data-status=ONLINE]').waitFor(WAIT);
    expect((await d.prisma.worker.findFirstOrThrow({ where: { name: 'rig-4090' } })).status).toBe('ONLINE');

    // A change made elsewhere arrives through workersChanged.
    const cpu = await d.prisma.worker.update({ where: { tokenId_name: { tokenId: (await d.prisma.worker.findFirstOrThrow({ where: { name: 'office-cpu' } })).tokenId, name: 'office-cpu' } }, data: { status: 'DRAINING' } });
    await d.server.pubsub.emit({ type: 'worker.changed', workerId: cpu.id, ownerId: userId });
    await page.locator('tr[data-worker="office-cpu"] [data-status=DRAINING]').waitFor(WAIT);

    await page.getByLabel('Machine name').fill('desktop-4090');
    await page.getByRole('button', { name: 'Create worker token' }).click();
    const cmd = page.locator('[data-testid=worker-command] code');
    await cmd.waitFor(WAIT);
    const command = (await cmd.textContent())!;
    expect(command).toMatch(/cgw_|worker/);
    await page.locator('table[aria-label="Worker tokens"]').getByText('desktop-4090').waitFor(WAIT);
    await screenshot(page, 'workers', { docs: true });
    await page.close();
  });

  it('creates and revokes API tokens', async () => {
    const page = await d.page(token);
    await page.goto(`${d.url}/tokens`);
    await page.getByText('No API tokens yet.').waitFor(WAIT);
    await page.getByLabel('New token name').fill('ci');
    await page.getByRole('button', { name: 'Create token' }).click();
    const shown = (await page.locator('[data-testid=new-token] code').textContent())!;
    const me = await d.gql(`{ me { email } }`, {}, shown);
    expect(me.data.me.email).toContain('@example.com');
    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('No API tokens yet.').waitFor(WAIT);
    expect((await d.gql(`{ me { email } }`, {}, shown)).data.me).toBeNull();
    await page.close();
  });

  it('shows not-found and error states', async () => {
    const page = await d.page(token);
    await page.goto(`${d.url}/jobs/${encodeURIComponent(Buffer.from('Job:00000000-0000-0000-0000-000000000000').toString('base64'))}`);
    await page.getByRole('heading', { name: 'Job not found' }).waitFor(WAIT);
    await page.goto(`${d.url}/nowhere`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor(WAIT);
    // A revoked session goes back to sign-in.
    const stale = await d.page('cgs_not_a_real_token');
    await stale.goto(`${d.url}/jobs`);
    await stale.waitForURL(/\/login/, WAIT);
    await page.close();
    await stale.close();
  });
});
