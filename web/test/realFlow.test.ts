/**
 * The dashboard end to end with nothing seeded: the real API (scheduler tick on) over
 * PostgreSQL, the builtin planner, and a real `chatgpu-worker` process running real
 * PyTorch on this machine's CPU. In a real browser a user signs up, adds a worker with
 * the command the page shows, drops the files of examples/torch-classifier, watches the
 * run's logs stream in and its loss chart draw, downloads the model (one file, and all
 * outputs as a .tar.gz) and compares bytes; submits a project with two entry points,
 * answers the planner's question inline and sees it resume and succeed; then pauses the
 * worker from the Workers page. The README's screenshots are taken here.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../../api/src/agents/builtin/builtinModel.js';
import { startWorker, type TestWorker } from '../../api/test/helpers/worker.js';
import { rawId, ROOT, screenshot, startDashboard } from './helpers/dashboard.js';

const d = await startDashboard({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const WAIT = { timeout: 30_000 };
const LONG = { timeout: 90_000 };
const TERMINAL = /^(SUCCEEDED|FAILED|CANCELLED|STOPPED)$/;

/** Drops files on the new-job page as a user's drag and drop does (the page reads the DataTransfer). */
async function dropFiles(page: Page, files: Record<string, string>) {
  await page.locator('[data-testid=dropzone]').waitFor(WAIT);
  await page.evaluate((list) => {
    const dt = new DataTransfer();
    for (const [name, content] of Object.entries(list)) dt.items.add(new File([content], name));
    document
      .querySelector('[data-testid=dropzone]')!
      .dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, files);
}

/** The job's status as the page's heading shows it. */
const shownStatus = (page: Page) => page.locator('h1 [data-status]').first().getAttribute('data-status');

async function dbJob(globalId: string) {
  return d.prisma.job.findUniqueOrThrow({
    where: { id: rawId(globalId) },
    include: { tasks: { include: { attempts: true }, orderBy: { createdAt: 'asc' } } },
  });
}

let page = await d.page(null);
let worker: TestWorker | undefined;
let booting: Promise<TestWorker>;
// Started inside a test (with the token the page shows), so stopped here rather than by its own helper's hook.
afterAll(async () => {
  const w = worker ?? (await booting?.catch(() => undefined));
  await w?.stop('SIGKILL');
});

describe('the dashboard with a real worker and the builtin planner', () => {
  let token = '';
  let trainJob = '';

  it('signs up and adds a worker with the command the page shows', async () => {
    await page.goto(`${d.url}/jobs`);
    await page.waitForURL(/\/login/, WAIT);
    await page.getByRole('link', { name: 'Create an account' }).click();
    const email = `ada${Date.now()}@example.com`;
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByText('No jobs yet.').waitFor(WAIT);
    token = (await page.evaluate(() => localStorage.getItem('chatgpu.token')))!;

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workers' }).click();
    await page.getByText('No workers are online in the network right now.').waitFor(WAIT);
    await page.getByLabel('Machine name').fill('cpu-box');
    await page.getByRole('button', { name: 'Create worker token' }).click();
    const command = (await page.locator('[data-testid=worker-command] code').textContent({ timeout: WAIT.timeout }))!;
    // The token travels in the environment, never as an argument (where `ps` shows it).
    const m = /^CHATGPU_WORKER_TOKEN=(\S+) npx chatgpu-worker --server (\S+)$/.exec(command);
    expect(m, command).not.toBeNull();
    // The machine runs the command it was given (with Debian's Python, which has PyTorch).
    // It takes a few seconds to probe the machine: the next test fills the form meanwhile.
    booting = startWorker(m![2]!, m![1]!, 'cpu-box', ['--python', '/usr/bin/python3']);
    booting.then((w) => (worker = w)).catch(() => {});
  });

  it('creates a job by dropping the example project and watches it run live: logs, loss chart, agent steps', async () => {
    // The new job is filled in a second tab while the Workers page waits for the worker.
    const workersTab = page;
    page = await d.page(null, workersTab.context());
    const dir = path.join(ROOT, 'examples/torch-classifier');
    const files = Object.fromEntries(
      readdirSync(dir)
        .filter((f) => statSync(path.join(dir, f)).isFile())
        .map((f) => [f, readFileSync(path.join(dir, f), 'utf8')]),
    );
    await page.goto(`${d.url}/jobs/new`);
    await dropFiles(page, files);
    const n = Object.keys(files).length;
    await page.getByText(new RegExp(`^${n} files, `)).waitFor(WAIT);
    for (const f of Object.keys(files)) expect(await page.locator('[role=tree]').textContent()).toContain(f);
    await page.getByLabel('Title').fill('Spiral classifier');
    await page.getByLabel(/What should happen/).fill('train it for 2 epochs and give me the model');
    await page.getByLabel(/Spending cap/).fill('2');
    await screenshot(page, 'new-job', { docs: true });

    // The worker came online: the Workers page shows it live, and the network overview counts it.
    await booting;
    const row = workersTab.locator('tr[data-worker="cpu-box"]');
    await row.locator('[data-status=ONLINE]').waitFor(WAIT);
    expect(await row.textContent()).toMatch(/PyTorch 1\.13/);
    await workersTab.locator('[data-testid=overview] [data-class=none]').getByText('1 online').waitFor(WAIT);
    await workersTab.close();

    await page.getByRole('button', { name: 'Submit job' }).click();
    await page.waitForURL(/\/jobs\/(?!new$)[^/]+$/, WAIT);
    trainJob = decodeURIComponent(page.url().split('/jobs/')[1]!);
    await page.getByRole('heading', { name: /Spiral classifier/ }).waitFor(WAIT);

    // The planner works in the open: its tool calls (with arguments and results) appear as it makes them.
    const activity = page.locator('[data-testid=agent-activity]');
    await activity.locator('li[data-tool=list_files]').first().waitFor(LONG);
    await page.locator('[data-testid=plan-commands] code').getByText('python train.py --epochs 2', { exact: false }).waitFor(LONG);
    const submitPlan = activity.locator('li[data-tool=submit_plan]').first();
    expect(await submitPlan.locator('pre[data-label=Arguments]').textContent()).toContain('"command": "python train.py --epochs 2');

    // The run's attempt appears; its logs are what the viewer shows (pinned, so the
    // evaluation attempt that follows does not replace them).
    const runTable = page.locator('table[aria-label="Attempts of run"]');
    await runTable.waitFor(LONG);
    await runTable
      .getByRole('button', { name: /Logs|Showing logs/ })
      .first()
      .click();
    const viewport = page.locator('[data-testid=log-viewport]');
    await viewport.getByText(/^epoch 1\/2: loss [\d.]+ accuracy [\d.]+$/).waitFor(LONG);
    // Lines streamed in before the job was over (evaluation of the checkpoint is still ahead).
    expect(await shownStatus(page)).not.toMatch(TERMINAL);
    await viewport.getByText(/^epoch 2\/2: /).waitFor(WAIT);
    // The run's loss curve: one vertex per logged epoch, drawn while the job runs.
    await page.locator('[data-testid=chart-loss] path[data-role=run][data-points="2"]').waitFor(WAIT);
    // History pages load (no error from the API's cost limit) and the page is not in an error state.
    expect(await page.getByText(/Could not load/).count()).toBe(0);
    const runningAs = await shownStatus(page);
    // The README shows the top of the page (status, tasks, logs, charts); the artifact, all of it.
    await page.setViewportSize({ width: 1360, height: 1760 });
    await screenshot(page, 'job-running', { docs: true, fullPage: false });
    await page.setViewportSize({ width: 1360, height: 900 });
    // The README's "job running" picture shows a job that was still running.
    expect(runningAs).not.toMatch(TERMINAL);
    const job = await dbJob(trainJob);
    const run = job.tasks.find((t) => t.kind === 'RUN')!;
    expect(await page.locator(`[data-attempt="${run.attempts[0]!.id}"]`).getAttribute('aria-selected')).toBe('true');
  });

  it('sees it succeed and downloads the model, alone and in the outputs archive, byte for byte', async () => {
    await page.locator('h1 [data-status=SUCCEEDED]').waitFor(LONG);
    await page
      .getByTestId('status-reason')
      .getByText(/reloaded and evaluated/)
      .waitFor(WAIT);
    const timeline = page.locator('[data-testid=timeline]');
    await timeline.getByText(/Validation of the evaluate passed/).waitFor(WAIT);
    const api = await d.gql(`query($id: ID!) { job(id: $id) { outputs { path sha256 size } } }`, { id: trainJob }, token);
    const model = api.data.job.outputs.find((o: { path: string }) => o.path === 'outputs/model.pt');
    expect(model).toBeTruthy();
    const blob = Buffer.from(
      await (await fetch(`${d.apiUrl}/blobs/${model.sha256}`, { headers: { authorization: `Bearer ${token}` } })).arrayBuffer(),
    );

    const dl = page.getByRole('button', { name: 'Download outputs/model.pt' });
    const [download] = await Promise.all([page.waitForEvent('download', WAIT), dl.click()]);
    expect(download.suggestedFilename()).toBe('model.pt');
    const bytes = readFileSync((await download.path())!);
    expect(bytes.length).toBe(model.size);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(model.sha256);
    expect(bytes.equals(blob)).toBe(true);

    const [archive] = await Promise.all([
      page.waitForEvent('download', WAIT),
      page.getByRole('button', { name: 'Download all (.tar.gz)' }).click(),
    ]);
    expect(archive.suggestedFilename()).toMatch(/^job-[0-9a-f]{8}-outputs\.tar\.gz$/);
    const out = mkdtempSync(path.join(tmpdir(), 'outputs-'));
    execFileSync('tar', ['-xzf', (await archive.path())!, '-C', out]);
    expect(readFileSync(path.join(out, 'outputs/model.pt')).equals(blob)).toBe(true);
    // The README's "job succeeded": the top of the page (what was asked and done, the curves after the end).
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.setViewportSize({ width: 1360, height: 1200 });
    await screenshot(page, 'job-succeeded', { docs: true, fullPage: false });
    await page.setViewportSize({ width: 1360, height: 900 });

    // A fresh page load gets the run's log and metric history by attempt id (attempt(id) pages).
    await page.reload();
    await page.locator('table[aria-label="Attempts of run"]').getByRole('button', { name: 'Logs' }).click();
    await page
      .locator('[data-testid=log-viewport]')
      .getByText(/^epoch 2\/2: /)
      .waitFor(WAIT);
    await page.locator('[data-testid=chart-loss] path[data-role=run][data-points="2"]').waitFor(WAIT);
    // After the job ended the evaluation's value is in the metrics table beside the curves.
    await page.locator('[data-testid=eval-metrics] tr[data-metric=eval_accuracy]').waitFor(WAIT);
    expect(await page.getByText(/Could not load/).count()).toBe(0);
    // Cost so far (from the attempts' usage) against the cap set on the form.
    expect(await page.locator('[data-testid=cost]').textContent()).toContain('cap CA$2.00');
  });

  it('asks which of two entry points to run; the answer given in the page resumes it to success', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'New job' }).click();
    await dropFiles(page, {
      'main.py': 'if __name__ == "__main__":\n    print("main")\n',
      'train.py':
        'import os\nif __name__ == "__main__":\n    os.makedirs("outputs", exist_ok=True)\n    open("outputs/done.txt", "w").write("trained")\n    print("trained")\n',
    });
    await page.getByText(/^2 files, /).waitFor(WAIT);
    await page.getByLabel('Title').fill('Two entry points');
    await page.getByLabel(/What should happen/).fill('run the project');
    await page.getByRole('button', { name: 'Submit job' }).click();
    await page.waitForURL(/\/jobs\/(?!new$)[^/]+$/, WAIT);
    const id = decodeURIComponent(page.url().split('/jobs/')[1]!);

    const form = page.locator('[data-testid=question-form]');
    await form.waitFor(LONG);
    expect(await form.textContent()).toMatch(/Which script should run/);
    await page.locator('h1 [data-status=NEEDS_INPUT]').waitFor(WAIT);
    await page.locator('[data-testid=agent-activity] li[data-tool=ask_user]').first().waitFor(WAIT);
    await screenshot(page, 'job-question', { fullPage: false });
    await form.getByLabel('train.py').check();
    await form.getByRole('button', { name: 'Send answer' }).click();
    await form.waitFor({ state: 'detached', ...WAIT });
    const q = await d.prisma.question.findFirstOrThrow({ where: { jobId: rawId(id) } });
    expect(q).toMatchObject({ status: 'ANSWERED', answer: 'train.py' });

    await page.locator('h1 [data-status=SUCCEEDED]').waitFor(LONG);
    expect(await page.locator('[data-testid=plan]').textContent()).toContain('python train.py');
    await page.getByRole('button', { name: 'Download outputs/done.txt' }).waitFor(WAIT);
    expect(await page.locator('[data-testid=timeline]').textContent()).toContain('Answered: train.py');
  });

  it('lists both jobs', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Jobs', exact: true }).click();
    await page.getByText('2 jobs').waitFor(WAIT);
    const rows = page.locator('table[aria-label=Jobs] tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.first().textContent()).toContain('Two entry points');
    expect(await rows.locator('[data-status=SUCCEEDED]').count()).toBe(2);
    await screenshot(page, 'jobs-list', { docs: true });
  });

  it('prepares code hard-wired to CUDA for the CPU worker: the Preparation section shows the fallback reference, the accepted migration with its diff and comparison', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'New job' }).click();
    const dir = path.join(ROOT, 'examples/cuda-classifier');
    await dropFiles(
      page,
      Object.fromEntries(
        readdirSync(dir)
          .filter((f) => f.endsWith('.py'))
          .map((f) => [f, readFileSync(path.join(dir, f), 'utf8')]),
      ),
    );
    await page.getByText(/^3 files, /).waitFor(WAIT);
    await page.getByLabel('Title').fill('CUDA-only classifier');
    await page.getByLabel(/What should happen/).fill('train it for 2 epochs and give me the model');
    await page.getByRole('button', { name: 'Submit job' }).click();
    await page.waitForURL(/\/jobs\/(?!new$)[^/]+$/, WAIT);
    const prep = page.locator('[data-testid=preparation]');
    await prep.waitFor(LONG);
    await page.locator('h1 [data-status=SUCCEEDED]').waitFor({ timeout: 150_000 });
    const reference = prep.locator('[data-step=reference] [data-testid=prep-record]');
    await reference.waitFor(WAIT);
    expect(await reference.getAttribute('data-outcome')).toBe('FALLBACK');
    expect(await reference.textContent()).toMatch(/No NVIDIA worker was online/);
    const migrate = prep.locator('[data-step=migrate] [data-testid=prep-record]');
    expect(await migrate.getAttribute('data-outcome')).toBe('ACCEPTED');
    await migrate.getByText('Diff').click();
    await migrate.locator('[data-testid=diff] .diff-add').first().waitFor(WAIT);
    expect(await migrate.locator('[data-testid=diff] .diff-del').first().textContent()).toMatch(/^-/);
    await migrate.getByText(/Comparison with the reference: within tolerance/).click();
    await migrate.locator('[data-testid=comparison] tbody tr').first().waitFor(WAIT);
    const [evidence] = await Promise.all([
      page.waitForEvent('download', WAIT),
      migrate.getByRole('button', { name: 'Download evidence (.tar.gz)' }).click(),
    ]);
    expect(evidence.suggestedFilename()).toBe('evidence-migrate.tar.gz');
    expect(execFileSync('tar', ['-tzf', (await evidence.path())!], { encoding: 'utf8' })).toContain('evidence/diff.patch');
    await page.locator('[aria-label=Stages] li', { hasText: 'Preparation' }).waitFor(WAIT);
    await prep.scrollIntoViewIfNeeded();
    await screenshot(page, 'job-preparation', { docs: true });
  });

  it('pauses the worker from the Workers page: PAUSED in the database, and the worker says so', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workers' }).click();
    const row = page.locator('tr[data-worker="cpu-box"]');
    await row.locator('[data-status=ONLINE]').waitFor(WAIT);
    await page.locator('[data-testid=overview] [data-class=none]').waitFor(WAIT);
    await screenshot(page, 'workers', { docs: true });
    await row.getByRole('button', { name: 'Pause' }).click();
    await row.locator('[data-status=PAUSED]').waitFor(WAIT);
    expect((await d.prisma.worker.findFirstOrThrow({ where: { name: 'cpu-box' } })).status).toBe('PAUSED');
    await worker!.waitFor(/paused by its owner/, 30_000);
    await row.getByRole('button', { name: 'Resume' }).waitFor(WAIT);
  });
});
