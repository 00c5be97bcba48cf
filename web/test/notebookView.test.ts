/**
 * An executed notebook output shown read-only on the job page, in a real browser over the real
 * API: the cells in order, the figure as an image, the notebook's HTML and scripts never run,
 * tracebacks without escape codes; a file that is not a notebook, too large or gone is one line
 * and stays downloadable. The outputs are seeded as completeAttempt stores them
 * (helpers/dashboard.ts).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { seriousViolations } from './helpers/axe.js';
import { CPU_CAPS, createJob, seedWorker, startDashboard } from './helpers/dashboard.js';

const d = await startDashboard();
const WAIT = { timeout: 30_000 };
const user = await d.signUp();
const worker = await seedWorker(d, user.userId, 'cpu-box', CPU_CAPS);

/** A 1×1 PNG (one red pixel). */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** An executed notebook as nbclient writes it (worker/python/chatgpu/notebook.py). */
const NOTEBOOK = {
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3' } },
  cells: [
    { cell_type: 'markdown', metadata: {}, source: ['# Descent\n', 'The loss <b id="nb-bold">falls</b>.'] },
    {
      cell_type: 'code',
      execution_count: 1,
      metadata: {},
      source: ['print("loss 0.25")\n', 'plt.plot([1, 2])'],
      outputs: [
        { output_type: 'stream', name: 'stdout', text: ['loss 0.25\n'] },
        { output_type: 'stream', name: 'stderr', text: ['UserWarning: slow\n'] },
        {
          output_type: 'display_data',
          metadata: {},
          data: { 'image/png': `${PNG}\n`, 'text/plain': ['<Figure size 640x480 with 1 Axes>'] },
        },
      ],
    },
    {
      cell_type: 'code',
      execution_count: 2,
      metadata: {},
      source: 'display(HTML(page))',
      outputs: [
        {
          output_type: 'display_data',
          metadata: {},
          data: { 'text/html': ['<div id="nb-html">hello</div>', '<script>window.__nbRan = true</script>'] },
        },
        {
          output_type: 'execute_result',
          execution_count: 2,
          metadata: {},
          data: { 'text/html': '<img src=x onerror="window.__nbRan = true">', 'text/plain': '   a\n0  1' },
        },
      ],
    },
    {
      cell_type: 'code',
      execution_count: 3,
      metadata: {},
      source: '1 / 0',
      outputs: [
        {
          output_type: 'error',
          ename: 'ZeroDivisionError',
          evalue: 'division by zero',
          traceback: [
            '\u001b[0;31m---------------------------------------------------------------------------\u001b[0m',
            '\u001b[0;31mZeroDivisionError\u001b[0m                         Traceback (most recent call last)',
            '\u001b[0;32m----> 1\u001b[0m \u001b[38;5;241m1\u001b[39m \u001b[38;5;241m/\u001b[39m \u001b[38;5;241m0\u001b[39m',
            '\u001b[0;31mZeroDivisionError\u001b[0m: division by zero',
          ],
        },
      ],
    },
  ],
};

/** A job whose succeeded run returned `files` (path → content, or a blob already stored), as completeAttempt stores them. */
async function jobWithOutputs(title: string, files: { path: string; content?: string; sha256?: string; size?: number }[]) {
  const job = await createJob(d, user.token, title);
  const outputs = [];
  for (const f of files) {
    const sha256 = f.sha256 ?? (await d.putBlob(f.content!, user.token));
    outputs.push({ path: f.path, sha256, size: f.size ?? Buffer.byteLength(f.content ?? ''), mode: 0o644 });
  }
  const now = new Date();
  const task = await d.prisma.task.create({
    data: {
      jobId: job.uuid,
      ownerId: user.userId,
      kind: 'RUN',
      role: 'RUN',
      name: 'run',
      codeVersionId: job.codeVersionId,
      command: 'python -m chatgpu.notebook analysis.ipynb',
      status: 'SUCCEEDED',
      attemptCount: 1,
      finishedAt: now,
    },
  });
  const attempt = await d.prisma.attempt.create({
    data: {
      taskId: task.id,
      number: 1,
      workerId: worker.id,
      fencingToken: randomBytes(8).toString('hex'),
      leaseExpiresAt: now,
      status: 'SUCCEEDED',
      startedAt: now,
      finishedAt: now,
      exitCode: 0,
    },
  });
  await d.prisma.task.update({
    where: { id: task.id },
    data: { currentAttemptId: attempt.id, result: { attemptId: attempt.id, exitCode: 0, outputs } },
  });
  await d.prisma.job.update({ where: { id: job.uuid }, data: { status: 'SUCCEEDED', startedAt: now, finishedAt: now } });
  await d.jobUpdated(job.uuid);
  const page = await d.page(user.token);
  await page.goto(`${d.url}/jobs/${encodeURIComponent(job.id)}`);
  await page.getByTestId('outputs').waitFor(WAIT);
  return page;
}

describe('the executed notebook on the job page', () => {
  it('shows the cells in order, read-only: text, stdout and stderr, the figure as an image; never the HTML or its scripts', async () => {
    const page = await jobWithOutputs('Descent notebook', [
      { path: 'outputs/analysis.ipynb', content: JSON.stringify(NOTEBOOK) },
      { path: 'outputs/figures/figure-1.png', content: 'png' },
    ]);
    // Only the notebook has a View control; the download stays beside it.
    expect(await page.getByRole('button', { name: /^View / }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Download outputs/analysis.ipynb' }).count()).toBe(1);
    await page.getByRole('button', { name: 'View outputs/analysis.ipynb' }).click();
    const view = page.getByRole('region', { name: /outputs\/analysis\.ipynb/ });
    const cells = view.getByRole('list', { name: 'Cells of outputs/analysis.ipynb' }).locator('> li');
    await cells.nth(3).waitFor(WAIT);
    expect(await page.getByRole('button', { name: 'Hide outputs/analysis.ipynb' }).getAttribute('aria-expanded')).toBe('true');

    expect(await cells.evaluateAll((els) => els.map((e) => e.getAttribute('data-cell')))).toEqual(['markdown', 'code', 'code', 'code']);
    expect(await view.locator('.nb-prompt').allTextContents()).toEqual(['In [1]:', 'In [2]:', 'In [3]:']);
    // Markdown as text: its HTML is shown, not made into elements.
    expect(await cells.nth(0).innerText()).toBe('# Descent\nThe loss <b id="nb-bold">falls</b>.');
    expect(await page.locator('#nb-bold').count()).toBe(0);

    const first = cells.nth(1);
    expect(await first.locator('pre.nb-source').textContent()).toBe('print("loss 0.25")\nplt.plot([1, 2])');
    expect(await first.locator('[data-output=stdout]').textContent()).toBe('loss 0.25\n');
    expect(await first.locator('[data-output=stderr] .nb-label').textContent()).toBe('stderr');
    expect(await first.locator('[data-output=stderr] pre').textContent()).toBe('UserWarning: slow\n');
    const img = first.getByRole('img', { name: '<Figure size 640x480 with 1 Axes>' });
    expect(await img.getAttribute('src')).toBe(`data:image/png;base64,${PNG}`);
    // The image decoded: a real PNG drawn by the browser, 1×1.
    await page.waitForFunction((el) => (el as HTMLImageElement).complete, await img.elementHandle(), WAIT);
    expect(await img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBe(1);

    // HTML output: not rendered, not run; the plain-text alternative where there is one.
    const second = cells.nth(2).getByRole('group', { name: 'Output of In [2]' });
    expect(await second.locator('> *').allTextContents()).toEqual(['(html output not shown)', '   a\n0  1']);
    expect(await page.locator('#nb-html').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __nbRan?: boolean }).__nbRan)).toBeUndefined();
    expect(await page.locator('script').evaluateAll((els) => els.filter((e) => e.textContent?.includes('__nbRan')).length)).toBe(0);
    expect(await view.locator('script, iframe, object, embed, svg').count()).toBe(0);
    expect(await view.locator('img').count()).toBe(1);

    // The error: name and value, the traceback without escape codes.
    const error = cells.nth(3).locator('[data-output=error]');
    expect(await error.locator('.nb-error-head').textContent()).toBe('ZeroDivisionError: division by zero');
    const traceback = (await error.locator('pre').textContent())!;
    expect(traceback.includes('\u001b') || /\[0;31m|\[38;5;241m/.test(traceback)).toBe(false);
    expect(traceback.split('\n')).toEqual([
      '---------------------------------------------------------------------------',
      'ZeroDivisionError                         Traceback (most recent call last)',
      '----> 1 1 / 0',
      'ZeroDivisionError: division by zero',
    ]);

    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Hide outputs/analysis.ipynb' }).click();
    await view.waitFor({ state: 'detached', ...WAIT });
    await page.close();
  });

  it('says in one line why a notebook cannot be shown (not JSON, too large, gone) and keeps its download', async () => {
    const gone = 'f'.repeat(64);
    const page = await jobWithOutputs('Broken notebooks', [
      { path: 'outputs/broken.ipynb', content: '{"cells": [{"cell_type": "code", ' },
      { path: 'outputs/huge.ipynb', content: JSON.stringify(NOTEBOOK), size: 25 * 1024 * 1024 },
      { path: 'outputs/gone.ipynb', sha256: gone, size: 100 },
    ]);
    const message = async (path: string) => {
      await page.getByRole('button', { name: `View ${path}` }).click();
      const alert = page.getByRole('region', { name: new RegExp(path.replace('.', '\\.')) }).getByRole('alert');
      await alert.waitFor(WAIT);
      expect(await page.getByRole('button', { name: `Download ${path}` }).isEnabled()).toBe(true);
      expect(await page.locator('.nb-cells').count()).toBe(0);
      return alert.textContent();
    };
    expect(await message('outputs/broken.ipynb')).toBe(
      'This notebook cannot be shown: it is not valid JSON. Download it to open it in Jupyter.',
    );
    expect(await message('outputs/huge.ipynb')).toBe(
      'This notebook cannot be shown: it is 25 MiB, over the 20 MiB shown here. Download it to open it in Jupyter.',
    );
    expect(await message('outputs/gone.ipynb')).toBe(
      'This notebook cannot be shown: this file is no longer available. Download it to open it in Jupyter.',
    );
    await page.close();
  });
});
