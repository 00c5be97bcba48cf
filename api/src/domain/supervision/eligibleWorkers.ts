/**
 * The online workers that could run a task (its `list_eligible_workers` tool), with the
 * same eligibility as the claim (db/sql/claimTasks.ts: workload, accelerator vendor,
 * memory, accelerator memory, pinned worker), each with its recent failures on this job,
 * and the others with why they cannot.
 */
import type { Db } from '../../db/client.js';
import { NotFoundError } from '../errors.js';

/** Attempts that ended this way count as a worker's failures. */
const FAILED = ['FAILED', 'LOST', 'STALE'] as const;

export interface EligibleWorker {
  id: string;
  name: string;
  memoryMiB: number;
  accelVendor: string;
  accelMemMiB: number;
  accelerators: string[];
  /** It installs Python packages in a per-job environment (setup phase), and from which index. */
  installsPackages: boolean;
  packageIndex: string | null;
  recentFailures: { taskId: string; attempt: number; status: string; errorClass: string | null }[];
}

export async function eligibleWorkers(db: Db, jobId: string, taskId: string, over: { minMemoryMiB?: number } = {}) {
  const task = await db.task.findFirst({ where: { id: taskId, jobId } });
  if (!task) throw new NotFoundError('Task', taskId);
  const minMemoryMiB = Math.max(task.minMemoryMiB, over.minMemoryMiB ?? 0);
  const workers = await db.worker.findMany({ where: { status: 'ONLINE' }, orderBy: { memoryMiB: 'asc' } });
  const failures = await db.attempt.findMany({
    where: { task: { jobId }, status: { in: [...FAILED] } },
    select: { workerId: true, taskId: true, number: true, status: true, errorClass: true },
    orderBy: { createdAt: 'desc' },
    take: 50,
  });
  const eligible: EligibleWorker[] = [];
  const ineligible: { id: string; name: string; why: string }[] = [];
  for (const w of workers) {
    const why = !w.workloads.includes(task.workload)
      ? `no ${task.workload} workload`
      : task.accelVendor !== null && task.accelVendor !== w.accelVendor
        ? `accelerator ${w.accelVendor}, the task needs ${task.accelVendor}`
        : w.memoryMiB < minMemoryMiB
          ? `${w.memoryMiB} MiB of memory, the task needs ${minMemoryMiB}`
          : w.accelMemMiB < task.minAccelMemMiB
            ? `${w.accelMemMiB} MiB of accelerator memory, the task needs ${task.minAccelMemMiB}`
            : task.pinnedWorkerId !== null && task.pinnedWorkerId !== w.id
              ? 'the task is pinned to another worker'
              : null;
    if (why) {
      ineligible.push({ id: w.id, name: w.name, why });
      continue;
    }
    const caps = w.capabilities as { accelerators?: { name: string }[]; install?: { enabled?: boolean; index?: string | null } };
    eligible.push({
      id: w.id,
      name: w.name,
      memoryMiB: w.memoryMiB,
      accelVendor: w.accelVendor,
      accelMemMiB: w.accelMemMiB,
      accelerators: (caps.accelerators ?? []).map((a) => a.name),
      installsPackages: caps.install?.enabled === true,
      packageIndex: caps.install?.index ?? null,
      recentFailures: failures
        .filter((f) => f.workerId === w.id)
        .map((f) => ({ taskId: f.taskId, attempt: f.number, status: f.status, errorClass: f.errorClass })),
    });
  }
  return { taskId, minMemoryMiB, eligible, ineligible };
}
