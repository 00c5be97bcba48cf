/**
 * A data-download step that only its network policy keeps from running (docs/data-downloads.md):
 * the tick (scheduler/tick.ts step 4d) fails it once it has waited `waitSec` (DOWNLOAD_WAIT_SEC),
 * so its job stops before the run with the reason — the URLs the step fetches and the policies of
 * the workers that refuse it — instead of waiting without end.
 *
 * Failed only when the policy is the one obstacle: at least one ONLINE worker could run the step
 * but for the network (the claim's eligibility, placement.ts canRunOn, with the step's network
 * need taken away), and none online allows it. With no worker online at all, or with online
 * workers that could not run it anyway (another workload, too little memory, …), it waits as any
 * task does: the wait explanation (scheduler/explainWait.ts) says why, and a worker that comes
 * back may take it. The wait counts from when the step became claimable (its runAfter), as for a
 * trust check no worker can take (domain/trust/replication.ts giveUpUnplaceableChecks).
 * A network task that is no data download (requirements.network without download: only an
 * `--allow-network always` worker takes it) is left to wait: the plan marks no such step.
 */
import type { Db } from '../../db/client.js';
import type { TaskKind } from '../../generated/prisma/client.js';
import { moveTasks } from '../leases/taskLifecycle.js';
import { downloadUrls, networkAllows, networkNeed, networkPolicyOf } from './networkPolicy.js';
import { canRunOn, onlineWorkers, type PlacementTask, type PlacementWorker } from './placement.js';

export interface RefusedDownload {
  jobId: string;
  taskId: string;
  name: string;
  kind: TaskKind;
  reason: string;
}

/**
 * What the policy decides for a waiting download step: `allowed` (an online worker allows it),
 * `waiting` (nothing online could run it anyway: no worker, or another obstacle), or `refused` with
 * the online workers that could run it but for their --allow-network.
 */
export function downloadPlacement(
  t: PlacementTask,
  workers: PlacementWorker[],
  minReputation: number,
): { state: 'allowed' | 'waiting' } | { state: 'refused'; refusing: PlacementWorker[] } {
  if (workers.some((w) => canRunOn(t, w, minReputation))) return { state: 'allowed' };
  const offline = { ...t, requirements: withoutNetwork(t.requirements) };
  const refusing = workers.filter(
    (w) => canRunOn(offline, w, minReputation) && !networkAllows(networkPolicyOf(w.capabilities), networkNeed(t.requirements)),
  );
  return refusing.length ? { state: 'refused', refusing } : { state: 'waiting' };
}

/** The reason a refused download step fails with: its URLs, the refusing workers' policies, how long it waited, what to do. */
export function refusedDownloadReason(requirements: unknown, refusing: { name: string; capabilities: unknown }[], waitSec: number): string {
  const urls = downloadUrls(requirements);
  const named = refusing
    .slice(0, 5)
    .map((w) => `${w.name} runs with --allow-network ${networkPolicyOf(w.capabilities)}`)
    .join('; ');
  const more = refusing.length > 5 ? ` and ${refusing.length - 5} more` : '';
  const waited = waitSec < 120 ? `${waitSec} s` : `${Math.round(waitSec / 60)} min`;
  return (
    `NETWORK_REFUSED: this step downloads data from ${urls.length ? urls.join(', ') : 'URLs its code builds (the plan names none)'}, ` +
    `and after ${waited} no online worker allows it: the workers that could run it refuse the network (${named}${more}). ` +
    'The run does not start without its data: start a worker with --allow-network downloads, or upload the data with the code.'
  );
}

/**
 * Fails the QUEUED data-download steps that waited `waitSec` while only refusing workers were
 * online (see the file comment), each through the task life cycle (QUEUED → FAILED, conditional:
 * a claim that took it first wins). The caller records the job event and emits `task.finished`,
 * so the job engine fails the job naming the step (jobs/advanceJob.ts afterStep).
 */
export async function failRefusedDownloads(tx: Db, now: Date, waitSec: number, minReputation: number): Promise<RefusedDownload[]> {
  const waiting = await tx.task.findMany({
    where: {
      status: 'QUEUED',
      requirements: { path: ['network'], equals: true },
      runAfter: { lt: new Date(now.getTime() - waitSec * 1000) },
    },
    orderBy: { createdAt: 'asc' },
    take: 100,
  });
  const downloads = waiting.filter((t) => networkNeed(t.requirements) === 'download');
  if (!downloads.length) return [];
  const online = await onlineWorkers(tx);
  if (!online.length) return [];
  const failed: RefusedDownload[] = [];
  for (const t of downloads) {
    const placed = downloadPlacement(t, online, minReputation);
    if (placed.state !== 'refused') continue;
    const reason = refusedDownloadReason(t.requirements, placed.refusing, waitSec);
    const moved = await moveTasks(tx, { id: t.id }, ['QUEUED'], 'FAILED', { statusReason: reason, finishedAt: now });
    if (moved) failed.push({ jobId: t.jobId, taskId: t.id, name: t.name, kind: t.kind, reason });
  }
  return failed;
}

/** The requirements without any network need (what the step would ask of a worker but for the network). */
function withoutNetwork(requirements: unknown): unknown {
  if (typeof requirements !== 'object' || requirements === null) return requirements;
  const { network: _network, download: _download, ...rest } = requirements as Record<string, unknown>;
  return rest;
}
