/**
 * Work done without a sandbox is said where people look, in a real browser: the Workers page
 * names each worker's isolation (bubblewrap; none for its owner's own jobs only; none by its
 * owner's --sandbox none), and a job whose attempt ran on such a worker says so above its tasks
 * and beside the attempt — not only in the attempt's first log line.
 */
import { describe, expect, it } from 'vitest';
import { CPU_CAPS, createJob, seedRunningAttempt, seedWorker, startDashboard } from './helpers/dashboard.js';

const d = await startDashboard();
const WAIT = { timeout: 30_000 };
const user = await d.signUp();

describe('no sandbox, shown', () => {
  it("the Workers page names each worker's isolation", async () => {
    await seedWorker(d, user.userId, 'isolated', CPU_CAPS);
    await seedWorker(d, user.userId, 'local', {
      ...CPU_CAPS,
      sandbox: 'none',
      ownJobsOnly: true,
      sandboxReason: 'No sandbox (bwrap is not installed): …',
    });
    await seedWorker(d, user.userId, 'risky', { ...CPU_CAPS, sandbox: 'none', sandboxReason: 'WARNING: --sandbox none: …' });
    const page = await d.page(user.token);
    await page.goto(`${d.url}/workers`);
    const shown = (name: string) => page.locator(`tr[data-worker="${name}"] [data-testid=worker-sandbox]`);
    await shown('local').waitFor(WAIT);
    expect(await shown('isolated').textContent()).toBe('bubblewrap (each task isolated)');
    expect(await shown('local').textContent()).toBe(
      "none: bubblewrap is not installed, so it runs only its owner's own jobs, as plain processes",
    );
    expect(await shown('risky').textContent()).toBe(
      "none (--sandbox none, its owner's choice): every task runs as a plain process on that machine",
    );
    // The state as a badge: the warning colour for none.
    const badge = (name: string) => page.locator(`tr[data-worker="${name}"] [data-testid=sandbox-badge]`);
    expect(await badge('isolated').textContent()).toBe('sandboxed');
    expect(await badge('isolated').getAttribute('class')).toContain('tone-ok');
    for (const name of ['local', 'risky']) {
      expect(await badge(name).textContent()).toBe('no sandbox');
      expect(await badge(name).getAttribute('class')).toContain('tone-warn');
    }
    await page.close();
  });

  it('a job that ran on the local worker without a sandbox says so on its page', async () => {
    const local = await d.prisma.worker.findFirstOrThrow({ where: { name: 'local' } });
    const job = await createJob(d, user.token, 'unsandboxed');
    await seedRunningAttempt(d, job, user.userId, local.id);
    const page = await d.page(user.token);
    await page.goto(`${d.url}/jobs/${encodeURIComponent(job.id)}`);
    const notice = page.getByTestId('no-sandbox-notice');
    await notice.waitFor(WAIT);
    expect(await notice.textContent()).toMatch(
      /^Ran without a sandbox on local: bubblewrap is not installed there, so that worker runs only your own jobs/,
    );
    expect(await page.locator('[data-testid=tasks] [data-testid=no-sandbox]').count()).toBe(1);

    // A job on an isolated worker shows neither.
    const isolated = await d.prisma.worker.findFirstOrThrow({ where: { name: 'isolated' } });
    const other = await createJob(d, user.token, 'sandboxed');
    await seedRunningAttempt(d, other, user.userId, isolated.id);
    await page.goto(`${d.url}/jobs/${encodeURIComponent(other.id)}`);
    await page.locator('[data-testid=tasks] tr[data-attempt]').waitFor(WAIT);
    expect(await page.getByTestId('no-sandbox-notice').count()).toBe(0);
    expect(await page.getByTestId('no-sandbox').count()).toBe(0);
    await page.close();
  });
});
