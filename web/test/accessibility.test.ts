/**
 * The four main pages (jobs, a job, new job, workers) under axe-core in a real browser: no
 * serious or critical violation. The job is a finished one with everything a job page shows
 * (plan, asks, curves, evaluation, tasks, logs, outputs, timeline); a running one adds the
 * progress bar. Screenshots of each page for docs/screenshots/ are taken here at 1366×768.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { seriousViolations } from './helpers/axe.js';
import {
  CPU_CAPS,
  createJob,
  screenshot,
  seedLogs,
  seedMetrics,
  seedRunningAttempt,
  seedWorker,
  startDashboard,
} from './helpers/dashboard.js';

const d = await startDashboard();
const WAIT = { timeout: 30_000 };
const user = await d.signUp();
const worker = await seedWorker(d, user.userId, 'cpu-box', CPU_CAPS);

async function doneTask(
  job: { uuid: string; codeVersionId: string },
  kind: 'RUN' | 'PROBE' | 'EVALUATE',
  name: string,
  seconds: number,
  metrics: Record<string, number>,
) {
  const end = new Date();
  const task = await d.prisma.task.create({
    data: {
      jobId: job.uuid,
      ownerId: user.userId,
      kind,
      role: name === 'smoke' ? 'SMOKE' : kind,
      name,
      codeVersionId: job.codeVersionId,
      command: `python ${name}.py`,
      status: 'SUCCEEDED',
      attemptCount: 1,
      finishedAt: end,
      result: { exitCode: 0, outputs: [], metrics },
    },
  });
  const attempt = await d.prisma.attempt.create({
    data: {
      taskId: task.id,
      number: 1,
      workerId: worker.id,
      fencingToken: randomBytes(8).toString('hex'),
      leaseExpiresAt: end,
      status: 'SUCCEEDED',
      startedAt: new Date(end.getTime() - seconds * 1000),
      finishedAt: end,
      exitCode: 0,
    },
  });
  await d.prisma.task.update({ where: { id: task.id }, data: { currentAttemptId: attempt.id } });
  return attempt;
}

function training(steps: number) {
  return Array.from({ length: steps }, (_, i) => [
    { seq: i, name: 'loss', step: i + 1, value: 1 / (i + 1) },
    { seq: i, name: 'accuracy', step: i + 1, value: 1 - 1 / (i + 2) },
    { seq: i, name: 'epoch', step: i + 1, value: i < steps / 2 ? 1 : 2 },
  ]).flat();
}

describe('accessibility (axe-core)', () => {
  it('the jobs list, a job, the new-job page and the workers page have no serious or critical violation', async () => {
    const job = await createJob(d, user.token, 'Spiral classifier');
    const smoke = await doneTask(job, 'PROBE', 'smoke', 4, { loss: 0.25 });
    const run = await doneTask(job, 'RUN', 'run', 40, { loss: 0.05, accuracy: 0.95 });
    const evaluate = await doneTask(job, 'EVALUATE', 'evaluate', 2, { eval_accuracy: 0.975 });
    await seedMetrics(d, job.uuid, smoke.id, training(4));
    await seedMetrics(d, job.uuid, run.id, training(20));
    await seedMetrics(d, job.uuid, evaluate.id, [{ seq: 0, name: 'eval_accuracy', step: 0, value: 0.975 }]);
    await seedLogs(d, job.uuid, evaluate.id, 0, ['worker: sandbox bwrap (private /tmp, no network)'], 'system');
    await seedLogs(d, job.uuid, evaluate.id, 1, [
      'evaluation accuracy on fresh data: 0.975',
      'CHATGPU_METRIC {"values":{"eval_accuracy":0.975}}',
    ]);
    const plan = await d.prisma.plan.create({
      data: {
        jobId: job.uuid,
        version: 1,
        author: 'builtin',
        summary: 'Train for 20 epochs, then reload and evaluate the checkpoint.',
        asks: [{ ask: 'for 20 epochs', kind: 'setting', status: 'honoured', detail: 'passed --epochs 20' }] as never,
        steps: ['Train for 20 epochs', 'Evaluate the checkpoint'],
        command: 'python train.py --epochs 20',
        environment: {},
        requirements: { workload: 'torch-cpu' },
        outputs: ['outputs/model.pt'],
        acceptanceCriteria: {
          exitCode: 0,
          requiredFiles: ['outputs/model.pt'],
          metrics: [],
          evaluate: { checkpoint: 'outputs/model.pt', command: 'python evaluate.py', reports: ['eval_accuracy'] },
        } as never,
      },
    });
    await d.prisma.job.update({
      where: { id: job.uuid },
      data: { status: 'SUCCEEDED', currentPlanId: plan.id, startedAt: new Date(Date.now() - 60_000), finishedAt: new Date() },
    });
    await d.event(job.uuid, 'agent.item', {
      runId: 'r1',
      agent: 'planner',
      seq: 0,
      type: 'function_call',
      status: 'PENDING',
      name: 'read_file',
      callId: 'c1',
      arguments: '{"path":"train.py"}',
    });
    await d.event(job.uuid, 'agent.item', {
      runId: 'r1',
      agent: 'planner',
      seq: 1,
      type: 'function_call_output',
      status: 'DONE',
      callId: 'c1',
      output: '{"content":"print(1)"}',
    });
    await d.event(job.uuid, 'job.status', { status: 'SUCCEEDED' });
    const running = await createJob(d, user.token, 'Still training');
    const live = await seedRunningAttempt(d, running, user.userId, worker.id, 'run');
    await seedMetrics(d, running.uuid, live.attempt.id, training(6));

    const page = await d.page(user.token);
    await page.setViewportSize({ width: 1366, height: 768 });
    const pages: [string, string, () => Promise<void>][] = [
      ['jobs', '/jobs', () => page.locator('table[aria-label=Jobs] tbody tr').nth(1).waitFor(WAIT)],
      ['job', `/jobs/${encodeURIComponent(job.id)}`, () => page.locator('[data-testid=chart-loss] path[data-role=run]').waitFor(WAIT)],
      ['job-running', `/jobs/${encodeURIComponent(running.id)}`, () => page.getByTestId('progress').waitFor(WAIT)],
      ['new-job', '/jobs/new', () => page.getByRole('button', { name: 'Submit job' }).waitFor(WAIT)],
      ['workers', '/workers', () => page.locator('tr[data-worker="cpu-box"]').waitFor(WAIT)],
    ];
    const found: Record<string, string[]> = {};
    for (const [name, url, ready] of pages) {
      await page.goto(`${d.url}${url}`);
      await ready();
      await page.waitForTimeout(300);
      found[name] = await seriousViolations(page);
      await screenshot(page, `a11y-${name}`, { fullPage: false });
    }
    expect(found).toEqual({ jobs: [], job: [], 'job-running': [], 'new-job': [], workers: [] });
    await page.close();
  });
});
