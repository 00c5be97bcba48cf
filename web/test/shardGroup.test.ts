/**
 * The job page's shard group (issue 14) in a real browser, with everything real: the API
 * with the builtin planner and the scheduler, three real worker processes, a Monte-Carlo
 * program split into one shard per worker. The page, opened before the shards exist, shows
 * them as one group and follows them live (subscription-driven): the check's verdict, n/N
 * reaching N/N, each shard's attempts — one shard's worker is SIGKILLed mid-shard, so that
 * shard shows its lost attempt (LEASE_EXPIRED) and its retry on another worker —, a shard's
 * logs opened in the page's log viewer, the merged result and the cost of all the shards.
 * One job for every assertion (CI time).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../../api/src/agents/builtin/builtinModel.js';
import { startWorker } from '../../api/test/helpers/worker.js';
import { formatCad } from '../src/lib/format.js';
import { rawId, ROOT, screenshot, startDashboard } from './helpers/dashboard.js';

// The example examples/montecarlo-pi/pi.py with a planted pause: the full run's shards (10000
// samples each) take seconds, so one is caught running; the check's bounded runs (100–3000) do not.
const EXAMPLE = readFileSync(path.join(ROOT, 'examples/montecarlo-pi/pi.py'), 'utf8');
const PI = EXAMPLE.replace(/^( +)share = hits \/ args\.samples$/m, '$1if args.samples >= 10000:\n$1    __import__("time").sleep(3)\n$&');
if (PI === EXAMPLE) throw new Error('pi.py changed: the planted pause has no place to go');

// A short lease: the killed worker's shard is found lost within seconds.
const d = await startDashboard(
  { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', LEASE_SEC: '5' },
  { scheduler: true, model: createBuiltinClient() },
);
const WAIT = { timeout: 120_000 };
const user = await d.signUp();
const wt = await d.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
const workers = new Map<string, Awaited<ReturnType<typeof startWorker>>>();
for (const name of ['shard-a', 'shard-b', 'shard-c'])
  workers.set(name, await startWorker(d.apiUrl, wt.data.createWorkerToken.token, name, ['--python', '/usr/bin/python3']));

const GROUP = `query($id: ID!) { job(id: $id) { status statusReason costCad shardGroup { phase total done retried costCad checkCostCad lostCostCad merged
  check { outcome reason } shards { index status seed size attemptCount costCad task { attempts { id number status workerName errorClass } } } } } }`;

describe('the shard group of the job page', () => {
  it('follows a sharded run live: check verdict, n/N to N/N, per-shard attempts with a retried shard, a shard’s logs, the merge and the cost', async () => {
    const sha = await d.putBlob(PI, user.token);
    const created = await d.gql(
      `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`,
      { i: { title: 'pi in shards', request: 'estimate pi with 30000 samples', files: [{ path: 'pi.py', sha256: sha }] } },
      user.token,
    );
    const jobId: string = created.data.createJob.id;
    const page = await d.page(user.token);
    await page.goto(`${d.url}/jobs/${encodeURIComponent(jobId)}`);

    // The group appears with the plan, before any shard runs.
    const group = page.getByTestId('shard-group');
    await group.waitFor(WAIT);
    expect(await group.locator('tr[data-shard]').count()).toBe(3);

    // One full-run shard caught running: its worker is killed.
    const running = await (async () => {
      const end = Date.now() + 120_000;
      for (;;) {
        const a = await d.prisma.attempt.findFirst({
          where: { status: 'RUNNING', task: { jobId: rawId(jobId), kind: 'SHARD' } },
          include: { worker: true, task: true },
        });
        if (a) return a;
        if (Date.now() > end) throw new Error('no shard was caught running');
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await workers.get(running.worker.name)!.stop('SIGKILL');

    // Live to the end: 3/3, merged, without reloading the page.
    await group
      .getByTestId('shard-progress')
      .getByText(/^3\/3 shards done/)
      .waitFor(WAIT);
    await page.locator('[data-testid=shard-group][data-phase=MERGED]').waitFor(WAIT);
    await page.locator('h1').locator('[data-status=SUCCEEDED], [data-status=FAILED], [data-status=CANCELLED]').waitFor(WAIT);
    const job = (await d.gql(GROUP, { id: jobId }, user.token)).data.job;
    expect(job.status, job.statusReason).toBe('SUCCEEDED');
    expect(await page.locator('h1 [data-status]').getAttribute('data-status')).toBe('SUCCEEDED');
    const g = job.shardGroup;
    expect(g).toMatchObject({ phase: 'MERGED', total: 3, done: 3 });

    // The check's verdict, as recorded.
    expect(g.check.outcome).toBe('ACCEPTED');
    const check = group.getByTestId('shard-check');
    expect(await check.locator('[data-status]').getAttribute('data-status')).toBe('ACCEPTED');
    expect(await check.textContent()).toContain(g.check.reason);
    expect(g.check.reason).toMatch(/^Adaptation accepted \(3 shards of 30000 samples\)/);

    // Each shard: its slice, seed and every attempt as stored; the killed one lost, then retried elsewhere.
    const killed = g.shards.filter((s: any) => s.task.attempts.some((a: any) => a.status === 'LOST'));
    expect(killed.map((s: any) => s.index)).toContain(
      g.shards.find((s: any) => s.task.attempts.some((a: any) => a.id === running.id)).index,
    );
    expect(g.retried).toBe(killed.length);
    expect(await group.getByTestId('shard-progress').textContent()).toBe(`3/3 shards done · ${g.retried} retried`);
    for (const s of g.shards) {
      const row = group.locator(`tr[data-shard="${s.index}"]`);
      expect(await row.getAttribute('data-status')).toBe('SUCCEEDED');
      expect(await row.locator('td').nth(1).textContent()).toBe(`10,000 samples · seed ${s.seed}`);
      const items = row.locator('li[data-attempt]');
      expect(await items.evaluateAll((els) => els.map((e) => [e.getAttribute('data-attempt'), e.getAttribute('data-status')]))).toEqual(
        s.task.attempts.map((a: any) => [a.id, a.status]),
      );
      for (const [i, a] of s.task.attempts.entries()) {
        const text = (await items.nth(i).textContent())!;
        expect(text).toContain(`#${a.number}${a.number > 1 ? ' retry' : ''} on ${a.workerName}`);
        if (a.errorClass) expect(text).toContain(a.errorClass);
      }
      if (killed.includes(s)) {
        expect(s.task.attempts.map((a: any) => [a.status, a.errorClass])).toEqual([
          ['LOST', 'LEASE_EXPIRED'],
          ['SUCCEEDED', null],
        ]);
        expect(s.task.attempts[0].workerName).toBe(running.worker.name);
        expect(s.task.attempts[1].workerName).not.toBe(running.worker.name);
      } else expect(s.task.attempts.map((a: any) => a.status)).toEqual(['SUCCEEDED']);
    }
    // The shards are not listed again among the tasks; the check's runs are.
    const tasks = page.getByTestId('tasks');
    expect(await tasks.locator('table[aria-label^="Attempts of shard-"]').count()).toBe(0);
    expect(await tasks.locator('table[aria-label="Attempts of adapt:original"]').count()).toBe(1);

    // A shard's logs in the page's log viewer: what that shard printed.
    const first = g.shards[0].task.attempts.find((a: any) => a.status === 'SUCCEEDED');
    await group.locator(`li[data-attempt="${first.id}"]`).getByRole('button', { name: 'Logs' }).click();
    await page.getByTestId('log-attempt').getByText(`shard-1 · attempt #${first.number} on ${first.workerName}`).waitFor(WAIT);
    await page
      .locator('[data-testid=log-viewport]')
      .getByText(/^\{"estimate": [\d.]+, "stderr": [\d.e-]+, "samples": 10000, "hits": \d+\}$/)
      .waitFor(WAIT);
    expect(await group.locator(`li[data-attempt="${first.id}"] button`).getAttribute('aria-pressed')).toBe('true');

    // The merged result, and the cost of all the shards: every attempt's billable usage, the check apart.
    expect((g.merged as any).samples).toBe(30000);
    expect(await group.getByTestId('shard-merged').textContent()).toContain('30000');
    const usage = async (where: object, billable: boolean) =>
      Number(
        (
          await d.prisma.usageEntry.aggregate({
            where: { billable, attempt: { task: { jobId: rawId(jobId), ...where } } },
            _sum: { costCad: true },
          })
        )._sum.costCad ?? 0,
      );
    expect(g.costCad).toBeCloseTo(await usage({ kind: 'SHARD' }, true), 6);
    expect(g.checkCostCad).toBeCloseTo(await usage({ name: { startsWith: 'adapt:' } }, true), 6);
    expect(g.lostCostCad).toBeCloseTo(
      (await usage({ kind: 'SHARD' }, false)) + (await usage({ name: { startsWith: 'adapt:' } }, false)),
      6,
    );
    expect(g.costCad).toBeGreaterThan(0);
    expect(g.costCad).toBeCloseTo(
      g.shards.reduce((a: number, s: any) => a + s.costCad, 0),
      6,
    );
    const costLine = await group.getByTestId('shard-cost').textContent();
    expect(costLine).toContain(`Cost of all 3 shards: ${formatCad(g.costCad)} · the check ${formatCad(g.checkCostCad)}`);
    if (g.lostCostCad > 0) expect(costLine).toContain(`${formatCad(g.lostCostCad)} of lost work not charged`);
    for (const s of g.shards) expect(await group.locator(`tr[data-shard="${s.index}"] td`).last().textContent()).toBe(formatCad(s.costCad));

    expect(await page.getByRole('alert').count()).toBe(0);
    // The group sits near the top of the page: the screenshot is the first screen.
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, 'job-shard-group', { docs: true, fullPage: false });
    await page.close();
  }, 240_000);
});
