import type { Db } from '../db/types.js';
import type { Rates } from '../db/sql/claimTasks.js';
import {
  avoidedWorkers,
  canRunOn,
  capReason,
  jobSpends,
  minTorchOf,
  needsSetup,
  onlineWorkers,
  ownJobsOnly,
  type PlacementWorker,
  trustOf,
} from '../domain/workers/placement.js';
import { devicesNeeded, devicesOf } from '../domain/workers/devices.js';
import { networkAllows, networkNeed, networkPolicyOf } from '../domain/workers/networkPolicy.js';

/**
 * For queued tasks that no ONLINE worker can run, a sentence saying why, set as the
 * task's statusReason when it changes (so the job says why it waits). Pure reading plus
 * one UPDATE per changed task; bounded to the 200 oldest waiting tasks per tick.
 */
export async function explainWait(
  prisma: Db,
  now: Date,
  rates: Rates,
  minReputation: number,
): Promise<{ taskId: string; jobId: string; reason: string }[]> {
  const tasks = await prisma.task.findMany({
    where: { status: 'QUEUED', runAfter: { lte: new Date(now.getTime() - 1000) } },
    orderBy: { createdAt: 'asc' },
    take: 200,
    include: { pinnedWorker: { select: { name: true, status: true } } },
  });
  if (tasks.length === 0) return [];
  const workers = await onlineWorkers(prisma);
  const changes: { taskId: string; jobId: string; reason: string }[] = [];
  const spendOf = jobSpends(prisma, rates, now);
  for (const t of tasks) {
    let reason: string | null = null;
    if (t.pinnedWorkerId) {
      const w = workers.find((x) => x.id === t.pinnedWorkerId);
      if (!w) reason = `Waiting for its pinned worker ${t.pinnedWorker?.name ?? ''} (${t.pinnedWorker?.status.toLowerCase() ?? 'gone'}).`;
    } else if (!workers.some((w) => canRunOn(t, w, minReputation))) {
      const trust = trustOf(t.requirements);
      const need = [
        t.workload,
        trust.avoidOwners.length
          ? `a worker of an owner other than the ${trust.avoidOwners.length} whose worker${trust.avoidOwners.length > 1 ? 's' : ''} already ran this result (an independent check)`
          : null,
        trust.checkable ? `a worker trusted with checkable work (reputation ≥ ${Math.max(minReputation, trust.minReputation)})` : null,
        needsSetup(t.requirements) ? 'a worker that installs Python packages' : null,
        minTorchOf(t.requirements) ? `PyTorch ≥ ${minTorchOf(t.requirements)} (a pin of the project)` : null,
        avoidedWorkers(t.requirements).length ? `a worker other than the ${avoidedWorkers(t.requirements).length} it failed on` : null,
        workers.some((w) => ownJobsOnly(w.capabilities) && w.ownerId !== t.ownerId)
          ? "a worker with a sandbox (those without one run only their owner's own jobs)"
          : null,
        devicesNeeded(t.requirements) > 1
          ? `${devicesNeeded(t.requirements)} ${t.accelVendor ? `${t.accelVendor} GPUs` : 'CPU cores in one slot'} on one worker (a distributed launch of ${devicesNeeded(t.requirements)} processes; multi-node runs are not supported)`
          : t.accelVendor
            ? `${t.accelVendor} accelerator`
            : null,
        networkWanted(t.requirements, workers),
        t.minAccelMemMiB ? `≥ ${Math.round(t.minAccelMemMiB / 1024)} GiB accelerator memory` : null,
        t.minMemoryMiB ? `≥ ${Math.round(t.minMemoryMiB / 1024)} GiB RAM` : null,
      ]
        .filter(Boolean)
        .join(', ');
      const have = workers.length
        ? workers
            .slice(0, 5)
            .map(
              (w) =>
                `${w.name} (${w.workloads.filter((x) => x !== 'shell').join('/') || 'shell'}${w.accelVendor !== 'none' ? `, ${devicesOf(w, w.accelVendor) > 1 ? `${devicesOf(w, w.accelVendor)}× ` : ''}${w.accelVendor} ${Math.round(w.accelMemMiB / 1024)} GiB` : ''}, ${Math.round(w.memoryMiB / 1024)} GiB RAM${devicesNeeded(t.requirements) > 1 && !t.accelVendor ? `, ${devicesOf(w, null)} cores a slot` : ''})`,
            )
            .join('; ')
        : 'none';
      reason = `No online worker can run this: it needs ${need}. Online workers: ${have}.`;
    }
    if (!reason && !t.pinnedWorkerId) reason = await capReason(spendOf, t, workers, rates);
    if (reason && reason !== t.statusReason) {
      await prisma.task.update({ where: { id: t.id }, data: { statusReason: reason } });
      changes.push({ taskId: t.id, jobId: t.jobId, reason });
    }
  }
  return changes;
}

/**
 * The network a task asks for, as a need (null: none): a data-download step wants a worker whose
 * owner allows downloads, any other a worker that gives every task the network; when no online
 * worker's --allow-network gives it, the refusing workers and their policies are named.
 */
function networkWanted(requirements: unknown, workers: PlacementWorker[]): string | null {
  const need = networkNeed(requirements);
  if (need === 'none') return null;
  const what =
    need === 'download' ? 'a worker that allows data downloads' : 'a worker that gives any task the network (--allow-network always)';
  if (workers.some((w) => networkAllows(networkPolicyOf(w.capabilities), need))) return what;
  const named = workers
    .slice(0, 5)
    .map((w) => `${w.name} runs with --allow-network ${networkPolicyOf(w.capabilities)}`)
    .join('; ');
  return `${what} (no online worker allows ${need === 'download' ? 'downloads' : 'it'}${named ? `: ${named}` : ''})`;
}
