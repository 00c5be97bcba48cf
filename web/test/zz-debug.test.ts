import { it } from 'vitest';
import { startDashboard, createJob, seedWorker, CPU_CAPS, seedRunningAttempt, seedLogs } from './helpers/dashboard.js';
const d = await startDashboard();
it('debug', async () => {
  const u = await d.signUp();
  const job = await createJob(d, u.token, 'Reconnect check');
  const worker = await seedWorker(d, u.userId, 'spare-cpu', CPU_CAPS, 'OFFLINE');
  const { attempt } = await seedRunningAttempt(d, job, u.userId, worker.id);
  const page = await d.page(u.token);
  page.on('response', async (r) => r.status() >= 400 && console.log('RESP', r.status(), r.url(), await r.text().catch(() => '')));
  await page.goto(`${d.url}/jobs/${encodeURIComponent(job.id)}`);
  await seedLogs(d, job.uuid, attempt.id, 0, ['before the outage']);
  await new Promise((r) => setTimeout(r, 3000));
  console.log((await page.content()).match(/<main>.*<\/main>/s)?.[0].slice(0, 2500));
});
