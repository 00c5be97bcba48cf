/**
 * The job page an ML engineer keeps open (issue 36), in a real browser over the real API:
 * every metric the run logged as curves that stay after the job ends (one chart per family,
 * the smoke run dashed beside the run, epoch marks not an epoch curve, the evaluation as a
 * table), growing live while the run runs; and no horizontal overflow at 1366×768 or
 * 1920×1080. Rows are seeded as the worker protocol stores them and announced with the
 * domain's own events (helpers/dashboard.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  CPU_CAPS,
  createJob,
  screenshot,
  seedLogs,
  seedMetrics,
  seedRunningAttempt,
  seedWorker,
  startDashboard,
  type Dashboard,
} from './helpers/dashboard.js';

const d = await startDashboard();
const WAIT = { timeout: 30_000 };
const user = await d.signUp();
const worker = await seedWorker(d, user.userId, 'cpu-box', CPU_CAPS);

/** A finished task with one SUCCEEDED attempt that ran `seconds`. */
async function seedDoneTask(
  d: Dashboard,
  job: { uuid: string; codeVersionId: string },
  kind: 'RUN' | 'PROBE' | 'EVALUATE',
  name: string,
  seconds: number,
) {
  const end = new Date();
  const start = new Date(end.getTime() - seconds * 1000);
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
      startedAt: start,
      finishedAt: end,
      exitCode: 0,
    },
  });
  await d.prisma.task.update({ where: { id: task.id }, data: { currentAttemptId: attempt.id } });
  return attempt;
}

/** The points of a 2-epoch training: loss, accuracy and the epoch counter at every step. */
function training(steps: number, seq0 = 0) {
  const points = [];
  let seq = seq0;
  for (let step = 1; step <= steps; step++) {
    points.push({ seq, name: 'loss', step, value: 1 / step });
    points.push({ seq, name: 'accuracy', step, value: 1 - 1 / (step + 1) });
    points.push({ seq, name: 'epoch', step, value: step <= steps / 2 ? 1 : 2 });
    seq++;
  }
  return points;
}

/** Vertices of an SVG path ("M x,y L x,y …"). */
const vertices = (d: string | null) => (d ?? '').match(/[ML]/g)?.length ?? 0;

async function noHorizontalOverflow(page: Page) {
  return page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth }));
}

describe('the job page', () => {
  it("draws a finished job's curves: every logged step, the smoke run beside the run, epoch marks, the evaluation as a table; the page fits 1366 and 1920 px", async () => {
    const job = await createJob(d, user.token, 'Spiral classifier');
    const smoke = await seedDoneTask(d, job, 'PROBE', 'smoke', 4);
    const run = await seedDoneTask(d, job, 'RUN', 'run', 40);
    const evaluate = await seedDoneTask(d, job, 'EVALUATE', 'evaluate', 2);
    await seedMetrics(d, job.uuid, smoke.id, training(4));
    await seedMetrics(d, job.uuid, run.id, training(20));
    await seedMetrics(d, job.uuid, evaluate.id, [{ seq: 0, name: 'eval_accuracy', step: 0, value: 0.975 }]);
    // The plan as submit_plan stores it (planSchema.ts), with long commands and nested criteria.
    const acceptance = {
      exitCode: 0,
      requiredFiles: ['outputs/model.pt', 'outputs/metrics.json'],
      metrics: [{ name: 'loss', op: '<=', value: 0.5 }],
      evaluate: {
        checkpoint: 'outputs/model.pt',
        command: `python evaluate.py --checkpoint outputs/model.pt ${'--an-unusually-long-flag-name=value '.repeat(6)}`,
        metrics: [{ name: 'eval_accuracy', op: '>=', value: 0.9 }],
        reports: ['eval_accuracy'],
      },
    };
    const plan = await d.prisma.plan.create({
      data: {
        jobId: job.uuid,
        version: 1,
        author: 'builtin',
        summary: 'Train the spiral classifier for 20 epochs on a CPU worker, then reload and evaluate the checkpoint.',
        asks: [
          { ask: 'train it for 20 epochs', kind: 'setting', status: 'honoured', detail: 'passed --epochs 20 to train.py' },
          {
            ask: 'on an AMD GPU',
            kind: 'hardware',
            status: 'refused',
            detail: 'No AMD worker is in the network; it runs on a CPU worker.',
          },
        ] as never,
        steps: [
          'Smoke-run 2 of 20 epochs to estimate the full run',
          'Train for 20 epochs and save outputs/model.pt',
          'Reload the checkpoint and evaluate it on fresh data',
        ],
        command: `python train.py --epochs 20 --save outputs/model.pt ${'--another-long-option=some/long/path/value '.repeat(6)}`,
        environment: {},
        requirements: { workload: 'torch-cpu', accelVendor: 'none', minMemoryMiB: 4096 },
        outputs: ['outputs/model.pt'],
        acceptanceCriteria: acceptance as never,
        smokeRun: { command: 'python train.py --epochs 2 --seed 0', scale: { unit: 'epoch', bounded: 2, full: 20 } } as never,
      },
    });
    await d.prisma.job.update({
      where: { id: job.uuid },
      data: {
        status: 'SUCCEEDED',
        currentPlanId: plan.id,
        acceptanceCriteria: acceptance as never,
        startedAt: new Date(Date.now() - 62_000),
        finishedAt: new Date(),
      },
    });
    await d.jobUpdated(job.uuid);

    const page = await d.page(user.token);
    await page.setViewportSize({ width: 1366, height: 768 });
    await page.goto(`${d.url}/jobs/${encodeURIComponent(job.id)}`);
    const loss = page.locator('[data-testid=chart-loss]');
    await loss.locator('path[data-role=run]').waitFor(WAIT);
    // The run's loss: one vertex per logged step (20), the smoke run's (4) dashed beside it.
    const runPath = loss.locator('path[data-role=run]');
    expect(await runPath.getAttribute('data-points')).toBe('20');
    expect(vertices(await runPath.getAttribute('d'))).toBe(20);
    const smokePath = loss.locator('path[data-role=smoke]');
    expect(vertices(await smokePath.getAttribute('d'))).toBe(4);
    expect(await smokePath.getAttribute('stroke-dasharray')).toBeTruthy();
    expect(await loss.locator('.legend').textContent()).toMatch(/run latest 0\.05 · 20 points.*smoke run latest 0\.25 · 4 points/);
    await page.locator('[data-testid=chart-accuracy] path[data-role=run]').waitFor(WAIT);
    // The epoch counter marks the step axis (epoch 2 begins at step 11); it is no chart of its own.
    expect(await page.locator('[data-testid=chart-epoch]').count()).toBe(0);
    expect(await loss.locator('[data-epoch]').count()).toBe(2);
    expect(await loss.locator('[data-epoch="2"] text').textContent()).toBe('epoch 2');
    // The evaluation's value, labelled, in a table.
    const evalRow = page.locator('[data-testid=eval-metrics] tr[data-metric=eval_accuracy]');
    await evalRow.waitFor(WAIT);
    expect(await evalRow.textContent()).toBe('eval_accuracy0.975evaluate');

    // What was asked and what became of it, at the top of the page (above the charts).
    const asks = page.locator('[data-testid=asks] tr');
    expect(await asks.allTextContents()).toEqual([
      '✓train it for 20 epochsdonepassed --epochs 20 to train.py',
      '✗on an AMD GPUrefusedNo AMD worker is in the network; it runs on a CPU worker.',
    ]);
    const [asksTop, chartsTop] = await Promise.all(
      [page.getByTestId('asks'), page.getByTestId('metrics')].map(async (l) => (await l.boundingBox())!.y),
    );
    expect(asksTop).toBeLessThan(chartsTop!);
    // The plan for people: numbered steps, the commands in order, criteria as sentences; durations everywhere.
    expect(await page.locator('[data-testid=plan-steps] li').allTextContents()).toEqual([
      'Smoke-run 2 of 20 epochs to estimate the full run',
      'Train for 20 epochs and save outputs/model.pt',
      'Reload the checkpoint and evaluate it on fresh data',
    ]);
    const commands = await page.locator('[data-testid=plan-commands] > li').allTextContents();
    expect(commands.map((c) => c.split('python')[0])).toEqual([
      'Smoke run (2 of 20 epochs, for the estimate)',
      'Full run',
      'Evaluation of the checkpoint',
    ]);
    expect(await page.locator('[data-testid=criteria] li').allTextContents()).toEqual([
      'The run exits with code 0.',
      'These files exist when it ends: outputs/model.pt, outputs/metrics.json.',
      'Its last reported loss is ≤ 0.5.',
      'The checkpoint outputs/model.pt is reloaded and evaluated on a worker (the last command above).',
      "The evaluation's eval_accuracy is ≥ 0.9.",
      'The evaluation reports eval_accuracy.',
    ]);
    expect(await page.locator('h1 + p').textContent()).toMatch(/ · took 1m 2s$/);
    expect(await page.locator('[data-testid=attempt-duration]').allTextContents()).toEqual(['4s', '40s', '2s']);

    for (const size of [
      { width: 1366, height: 768 },
      { width: 1920, height: 1080 },
    ]) {
      await page.setViewportSize(size);
      await page.waitForTimeout(100);
      const { scrollWidth, innerWidth } = await noHorizontalOverflow(page);
      expect(scrollWidth, `at ${size.width}×${size.height}`).toBeLessThanOrEqual(innerWidth);
    }
    await page.setViewportSize({ width: 1366, height: 768 });
    await screenshot(page, 'job-curves', { fullPage: true });
    // The curves stay after a reload (history from the stored points, not only live ones).
    await page.reload();
    await page.locator('[data-testid=chart-loss] path[data-role=run][data-points="20"]').waitFor(WAIT);
    await page.close();
  });

  it('grows the curves live while the run runs', async () => {
    const job = await createJob(d, user.token, 'Live curves');
    const { attempt } = await seedRunningAttempt(d, job, user.userId, worker.id, 'run');
    const page = await d.page(user.token);
    await page.setViewportSize({ width: 1366, height: 768 });
    await page.goto(`${d.url}/jobs/${encodeURIComponent(job.id)}`);
    await page.getByText('No metrics reported yet.').waitFor(WAIT);
    const points = training(10);
    await seedMetrics(d, job.uuid, attempt.id, points.slice(0, 9));
    const runPath = page.locator('[data-testid=chart-loss] path[data-role=run]');
    await page.locator('[data-testid=chart-loss] path[data-role=run][data-points="3"]').waitFor(WAIT);
    await seedMetrics(d, job.uuid, attempt.id, points.slice(9));
    await page.locator('[data-testid=chart-loss] path[data-role=run][data-points="10"]').waitFor(WAIT);
    expect(vertices(await runPath.getAttribute('d'))).toBe(10);
    await page.close();
  });

  it("shows logs for people: metric lines hidden until asked for, long lines wrapped, the worker's own lines tagged, search kept", async () => {
    const job = await createJob(d, user.token, 'Readable logs');
    const { attempt } = await seedRunningAttempt(d, job, user.userId, worker.id, 'run');
    const sandbox = `worker: sandbox bwrap (user namespace, private /tmp, read-only /usr, no network), ${'attempt directory /var/lib/chatgpu/attempts/abc, '.repeat(4)}END-OF-DETAILS`;
    await seedLogs(d, job.uuid, attempt.id, 0, [sandbox], 'system');
    await seedLogs(d, job.uuid, attempt.id, 1, [
      'epoch 1/2: loss 0.6931 accuracy 0.512',
      'CHATGPU_METRIC {"step":1,"values":{"loss":0.6931,"accuracy":0.512,"epoch":1}}',
      'epoch 2/2: loss 0.4100 accuracy 0.801',
      'CHATGPU_METRIC {"step":2,"values":{"loss":0.41,"accuracy":0.801,"epoch":2}}',
    ]);
    const page = await d.page(user.token);
    await page.setViewportSize({ width: 1366, height: 768 });
    await page.goto(`${d.url}/jobs/${encodeURIComponent(job.id)}`);
    const count = page.getByTestId('log-count');
    await count.getByText('5 lines · 2 metric lines hidden').waitFor(WAIT);
    const viewport = page.getByTestId('log-viewport');
    expect(await viewport.locator('.line').count()).toBe(3);
    expect(await viewport.getByText(/CHATGPU_METRIC/).count()).toBe(0);

    // The worker's own line: tagged, styled apart, and wrapped whole (nothing cut at the right edge).
    const first = viewport.locator('[data-seq="0"]');
    expect(await first.getAttribute('class')).toContain('system');
    expect(await first.locator('.src').textContent()).toBe('worker');
    const box = await first.evaluate((el) => ({ h: el.clientHeight, sw: el.scrollWidth, cw: el.clientWidth, text: el.textContent }));
    expect(box.h).toBeGreaterThanOrEqual(36);
    expect(box.sw).toBeLessThanOrEqual(box.cw);
    expect(box.text).toContain('END-OF-DETAILS');
    // Wrapped rows do not overlap: the next line starts below the last row of this one.
    const next = await viewport.locator('[data-seq="1"]').evaluate((el) => el.offsetTop);
    expect(next).toBeGreaterThanOrEqual(box.h);
    expect(await viewport.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    const [sys, out] = await Promise.all(
      [first, viewport.locator('[data-seq="1"]')].map((l) => l.evaluate((el) => getComputedStyle(el).color)),
    );
    expect(sys).not.toBe(out);

    // Wrap off: one row per line, scrolled sideways.
    await page.getByRole('button', { name: 'Wrap' }).click();
    expect(await first.evaluate((el) => el.clientHeight)).toBe(18);
    expect(await viewport.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
    await page.getByRole('button', { name: 'Wrap' }).click();

    // The toggle shows them; search still finds across what is shown.
    await page.getByRole('button', { name: 'Metric lines' }).click();
    await viewport.locator('.line.metric').first().waitFor(WAIT);
    expect(await viewport.locator('.line').count()).toBe(5);
    await page.getByLabel('Search the log').fill('loss 0.41');
    await count.getByText('1 matching of 5 lines').waitFor(WAIT);
    await page.getByRole('button', { name: 'Metric lines' }).click();
    await page.getByLabel('Search the log').fill('epoch');
    await count.getByText('2 matching of 5 lines · 2 metric lines hidden').waitFor(WAIT);
    await page.close();
  });

  it("shows the run's progress and ETA while it runs: step s of S from the smoke run's estimate, elapsed, time left, cost", async () => {
    const job = await createJob(d, user.token, 'Twenty epochs');
    const smoke = await seedDoneTask(d, job, 'PROBE', 'smoke', 4);
    await seedMetrics(d, job.uuid, smoke.id, training(10)); // 2 epochs of 5 steps
    // The estimate as the job engine stores it (jobs/estimate.ts): 2 of 20 epochs measured.
    const measured = {
      runSeconds: 4,
      peakMemoryMiB: 300,
      outputBytes: 0,
      worker: 'cpu-box',
      unit: 'epoch',
      bounded: 2,
      full: 20,
      secondsPerStep: 0.3,
    };
    const estimate = {
      source: 'smoke run',
      basis: 'Smoke run on cpu-box: 2 of 20 epochs in 4 s.',
      durationSec: 40,
      lowSec: 32,
      highSec: 50,
      costCad: 0.004,
      lowCad: 0.003,
      highCad: 0.005,
      measured,
    };
    await d.prisma.job.update({ where: { id: job.uuid }, data: { estimate: estimate as never } });
    const { attempt } = await seedRunningAttempt(d, job, user.userId, worker.id, 'run');
    const page = await d.page(user.token);
    await page.setViewportSize({ width: 1366, height: 768 });
    await page.goto(`${d.url}/jobs/${encodeURIComponent(job.id)}`);
    const progress = page.getByTestId('progress');
    // Before any metric: the estimate against the time elapsed.
    await progress.getByText(/elapsed/).waitFor(WAIT);
    expect(await page.getByTestId('eta').textContent()).toMatch(/^about \d+s left \(from the estimate\)$/);
    // 25 of 100 steps (the smoke run's 10 steps × 20/2); the run's epoch counter says 1 at step 25.
    await seedMetrics(d, job.uuid, attempt.id, training(50).slice(0, 75));
    await progress.getByText(/step 25 of 100/).waitFor(WAIT);
    expect(await progress.textContent()).toMatch(/step 25 of 100 · epoch 1 of 20 · \d+s elapsed/);
    expect(await page.getByTestId('eta').textContent()).toMatch(/^about \d+s left$/);
    expect(await progress.getByRole('progressbar').getAttribute('aria-valuenow')).toBe('25');
    expect(await progress.textContent()).toContain('of about CA$0.0040 expected');
    // It ends: no progress bar on a finished run.
    await d.prisma.attempt.update({ where: { id: attempt.id }, data: { status: 'SUCCEEDED', finishedAt: new Date() } });
    await d.event(job.uuid, 'attempt.status', { attemptId: attempt.id, number: 1, workerName: 'cpu-box', status: 'SUCCEEDED' });
    await progress.waitFor({ state: 'detached', ...WAIT });
    await page.close();
  });

  it('says one thing about validation: the outputs, the timeline and the API use the same words (unverified: why)', async () => {
    const job = await createJob(d, user.token, 'Checked once');
    const run = await seedDoneTask(d, job, 'RUN', 'run', 10);
    const sha = await d.putBlob('weights', user.token);
    await d.prisma.task.update({
      where: { id: run.taskId },
      data: { result: { attemptId: run.id, exitCode: 0, outputs: [{ path: 'outputs/model.pt', sha256: sha, size: 7, mode: 0o644 }] } },
    });
    // As trust/replication.ts records a sampled result with no worker of another owner to replicate on.
    const why =
      "Sampled (100% of cpu-box's checkable results are replicated), but no worker of another owner is online to replicate on: accepted unverified.";
    await d.prisma.resultCheck.create({
      data: {
        jobId: job.uuid,
        taskId: run.taskId,
        attemptId: run.id,
        workerId: worker.id,
        reputation: 0.5,
        share: 1,
        draw: 0.1,
        status: 'UNCHECKED',
        settledAt: new Date(),
        report: why,
      },
    });
    await d.event(job.uuid, 'trust.check', {
      step: 'sampled',
      taskId: run.taskId,
      task: 'run',
      worker: 'cpu-box',
      replicated: false,
      reason: why,
    });
    await d.prisma.job.update({
      where: { id: job.uuid },
      data: { status: 'SUCCEEDED', startedAt: new Date(Date.now() - 20_000), finishedAt: new Date() },
    });
    await d.event(job.uuid, 'job.status', { status: 'SUCCEEDED' });
    await d.jobUpdated(job.uuid);

    const api = await d.gql(`query($id: ID!) { job(id: $id) { validation { badge label reason } } }`, { id: job.id }, user.token);
    expect(api.data.job.validation).toEqual({ badge: 'unverified', label: 'unverified', reason: why });
    const page = await d.page(user.token);
    await page.goto(`${d.url}/jobs/${encodeURIComponent(job.id)}`);
    const outputs = page.locator('section', { has: page.getByRole('heading', { name: 'Outputs' }) });
    await outputs.getByTestId('validation-badge').waitFor(WAIT);
    expect(await outputs.getByTestId('validation-badge').getAttribute('data-badge')).toBe('unverified');
    expect(await outputs.getByTestId('validation-reason').textContent()).toBe(`: ${why}`);
    const trust = page.locator('[data-testid=timeline] li[data-kind="trust.check"]');
    await trust.waitFor(WAIT);
    expect(await trust.getByTestId('validation-badge').textContent()).toBe('unverified');
    // The timeline reads oldest first, like the agent activity: submitted before the trust check.
    const kinds = await page.locator('[data-testid=timeline] li').evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')));
    expect(kinds[0]).toBe('job.created');
    expect(kinds.at(-1)).toBe('job.status');
    await page.close();
  });

  it('the jobs list tells two runs of one project apart: request excerpt, duration, headline metric, failure reason, status filter', async () => {
    const other = await d.signUp();
    const a = await createJob(d, other.token, 'Spiral classifier');
    const b = await createJob(d, other.token, 'Spiral classifier');
    await d.prisma.job.update({
      where: { id: a.uuid },
      data: {
        request: 'train it for 20 epochs with a learning rate of 0.001 and give me the model and its accuracy on fresh data, please',
        status: 'SUCCEEDED',
        startedAt: new Date(Date.now() - 95_000),
        finishedAt: new Date(Date.now() - 5_000),
      },
    });
    await d.prisma.job.update({
      where: { id: b.uuid },
      data: {
        request: 'train it for 2 epochs',
        status: 'FAILED',
        statusReason: 'The run failed: exit code 1 (ModuleNotFoundError: No module named tqdm).',
        startedAt: new Date(Date.now() - 30_000),
        finishedAt: new Date(),
      },
    });
    // Each task's result as completeAttempt stores it: the last value of each metric.
    await d.prisma.task.create({
      data: {
        jobId: a.uuid,
        ownerId: other.userId,
        kind: 'EVALUATE',
        role: 'EVALUATE',
        name: 'evaluate',
        codeVersionId: a.codeVersionId,
        command: 'python evaluate.py',
        status: 'SUCCEEDED',
        result: { exitCode: 0, outputs: [], metrics: { eval_accuracy: 0.975 } },
      },
    });
    await d.prisma.task.create({
      data: {
        jobId: a.uuid,
        ownerId: other.userId,
        kind: 'RUN',
        role: 'RUN',
        name: 'run',
        codeVersionId: a.codeVersionId,
        command: 'python train.py',
        status: 'SUCCEEDED',
        result: { exitCode: 0, outputs: [], metrics: { loss: 0.04, epoch: 20 } },
      },
    });
    const page = await d.page(other.token);
    await page.setViewportSize({ width: 1366, height: 768 });
    await page.goto(`${d.url}/jobs`);
    const rows = page.locator('table[aria-label=Jobs] tbody tr');
    await rows.nth(1).waitFor(WAIT);
    const failed = rows.nth(0);
    const succeeded = rows.nth(1);
    expect(await succeeded.getByTestId('request-excerpt').textContent()).toBe(
      'train it for 20 epochs with a learning rate of 0.001 and give me the model and its…',
    );
    expect(await succeeded.getByTestId('headline-metric').textContent()).toBe('eval_accuracy 0.975');
    expect(await succeeded.getByTestId('job-duration').textContent()).toBe('1m 30s');
    expect(await failed.getByTestId('request-excerpt').textContent()).toBe('train it for 2 epochs');
    expect(await failed.getByTestId('failure-reason').textContent()).toBe(
      'The run failed: exit code 1 (ModuleNotFoundError: No module named tqdm).',
    );
    expect(await failed.getByTestId('headline-metric').textContent()).toBe('—');
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
    // A running job: how long it has run and, from its estimate, about how long is left.
    const c = await createJob(d, other.token, 'Spiral classifier');
    const measured = {
      runSeconds: 4,
      peakMemoryMiB: null,
      outputBytes: 0,
      worker: 'list-box',
      unit: 'epoch',
      bounded: 2,
      full: 20,
      secondsPerStep: null,
    };
    await d.prisma.job.update({
      where: { id: c.uuid },
      data: {
        status: 'RUNNING',
        startedAt: new Date(Date.now() - 60_000),
        estimate: {
          source: 'smoke run',
          basis: '…',
          durationSec: 600,
          lowSec: 500,
          highSec: 700,
          costCad: 0.01,
          lowCad: 0.01,
          highCad: 0.02,
          measured,
        } as never,
      },
    });
    await page.reload();
    await rows.nth(2).waitFor(WAIT);
    expect(await rows.nth(0).getByTestId('job-duration').textContent()).toMatch(/^1m \d+sabout [89]m \d+s left$/);
    await page.getByLabel('Status').selectOption('FAILED');
    await page.getByText('1 job with this status').waitFor(WAIT);
    expect(await rows.count()).toBe(1);
    await page.close();
  });

  it('the submit page shows an example request and why Submit is greyed', async () => {
    const page = await d.page(user.token);
    await page.setViewportSize({ width: 1366, height: 768 });
    await page.goto(`${d.url}/jobs/new`);
    const submit = page.getByRole('button', { name: 'Submit job' });
    await submit.waitFor(WAIT);
    expect(await page.getByLabel(/What should happen/).getAttribute('placeholder')).toMatch(/^e\.g\. Train it for 20 epochs/);
    expect(await submit.isDisabled()).toBe(true);
    expect(await page.getByTestId('submit-why').textContent()).toBe('Add your project’s files first (step 1).');
    await page.locator('[data-testid=dropzone]').evaluate((el) => {
      const dt = new DataTransfer();
      dt.items.add(new File(['print(1)\n'], 'train.py'));
      el.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    await page.getByTestId('submit-why').getByText('Give the job a title.').waitFor(WAIT);
    await page.getByLabel('Title').fill('Tiny');
    await page.getByTestId('submit-why').getByText('Say what should happen.').waitFor(WAIT);
    await page.getByLabel(/What should happen/).fill('run it');
    await page.getByTestId('submit-why').waitFor({ state: 'detached', ...WAIT });
    expect(await submit.isDisabled()).toBe(false);
    // The accessible description of the disabled button is the reason.
    await page.getByLabel('Title').fill('');
    expect(await submit.getAttribute('aria-describedby')).toBe('submit-why');
    await page.close();
  });
});
