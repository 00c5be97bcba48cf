import type { Prisma } from '../db/client.js';

/**
 * For queued tasks that no ONLINE worker can run, a sentence saying why, set as the
 * task's statusReason when it changes (so the job says why it waits). Pure reading plus
 * one UPDATE per changed task; bounded to the 200 oldest waiting tasks per tick.
 */
export async function explainWait(prisma: Prisma, now: Date): Promise<{ taskId: string; jobId: string; reason: string }[]> {
  const tasks = await prisma.task.findMany({
    where: { status: 'QUEUED', runAfter: { lte: new Date(now.getTime() - 1000) } },
    orderBy: { createdAt: 'asc' },
    take: 200,
    include: { pinnedWorker: { select: { name: true, status: true } } },
  });
  if (tasks.length === 0) return [];
  const workers = await prisma.worker.findMany({
    where: { status: 'ONLINE' },
    select: { id: true, name: true, workloads: true, accelVendor: true, memoryMiB: true, accelMemMiB: true, capabilities: true },
  });
  const installs = (w: (typeof workers)[number]) => (w.capabilities as { install?: { enabled?: boolean } } | null)?.install?.enabled === true;
  const changes: { taskId: string; jobId: string; reason: string }[] = [];
  for (const t of tasks) {
    let reason: string | null = null;
    if (t.pinnedWorkerId) {
      const w = workers.find((x) => x.id === t.pinnedWorkerId);
      if (!w) reason = `Waiting for its pinned worker ${t.pinnedWorker?.name ?? ''} (${t.pinnedWorker?.status.toLowerCase() ?? 'gone'}).`;
    } else if (!workers.some((w) => w.workloads.includes(t.workload) && (!t.accelVendor || t.accelVendor === w.accelVendor) && t.minMemoryMiB <= w.memoryMiB && t.minAccelMemMiB <= w.accelMemMiB && (!needsSetup(t.requirements) || installs(w)))) {
      const need = [
        t.workload,
        needsSetup(t.requirements) ? 'a worker that installs Python packages' : null,
        t.accelVendor ? `${t.accelVendor} accelerator` : null,
        t.minAccelMemMiB ? `≥ ${Math.round(t.minAccelMemMiB / 1024)} GiB accelerator memory` : null,
        t.minMemoryMiB ? `≥ ${Math.round(t.minMemoryMiB / 1024)} GiB RAM` : null,
      ].filter(Boolean).join(', ');
      const have = workers.length
        ? workers.slice(0, 5).map((w) => `${w.name} (${w.workloads.filter((x) => x !== 'shell').join('/') || 'shell'}${w.accelVendor !== 'none' ? `, ${w.accelVendor} ${Math.round(w.accelMemMiB / 1024)} GiB` : ''}, ${Math.round(w.memoryMiB / 1024)} GiB RAM)`).join('; ')
        : 'none';
      reason = `No online worker can run this: it needs ${need}. Online workers: ${have}.`;
    }
    if (reason && reason !== t.statusReason) {
      await prisma.task.update({ where: { id: t.id }, data: { statusReason: reason } });
      changes.push({ taskId: t.id, jobId: t.jobId, reason });
    }
  }
  return changes;
}

function needsSetup(requirements: unknown): boolean {
  return typeof requirements === 'object' && requirements !== null && 'setup' in requirements;
}
