/**
 * Usage and cost (docs/architecture.md §9): each attempt's reserved CPU cores, RAM and
 * accelerator time, priced from configured CAD rates, recorded as UsageEntry rows per
 * interval.
 *
 * Who pays: the user, unless the work was lost through no fault of theirs — the attempt
 * was LOST (its worker stopped renewing the lease) or then STALE (a late report), or it
 * FAILED on an infrastructure error (INFRASTRUCTURE_ERRORS: the machine, not the code).
 * That usage is the contributor's loss: its entries are not billable.
 *   Job.costCad     = sum of the job's billable entries (the user's cost; the cap counts it)
 *   Job.lostCostCad = sum of the others (shown apart, never charged)
 * An attempt's entries are billable while it runs and move out (writeOffAttemptUsage)
 * in the same transaction that ends it as a loss; entries accrued after that are
 * written non-billable directly. A task that fails on its own code stays the user's.
 */
import { Prisma as P } from '../../generated/prisma/client.js';
import type { Db } from '../../db/client.js';
import { writeOffUsage } from '../../db/sql/writeOffUsage.js';
import { INFRASTRUCTURE_ERRORS } from '../leases/errorClasses.js';
import type { Resources } from '../resources.js';

/** Whether an attempt ended in a way the user is not charged for (see the file comment). */
export function isContributorLoss(a: { status: string; errorClass: string | null }): boolean {
  if (a.status === 'LOST' || a.status === 'STALE') return true;
  return a.status === 'FAILED' && a.errorClass !== null && INFRASTRUCTURE_ERRORS.has(a.errorClass);
}

/**
 * Moves the usage already accrued by these attempts out of their jobs' costCad into
 * lostCostCad, exactly once (db/sql/writeOffUsage.ts). Call it inside the transaction
 * that ends the attempts as a loss.
 */
export async function writeOffAttemptUsage(tx: Db, attemptIds: string[]) {
  return writeOffUsage(tx, attemptIds);
}

export interface Reservation {
  cpuCores: number;
  memoryMiB: number;
  accelerators: number;
  accelClass: string | null;
}

export function priceInterval(rates: Resources['config']['rates'], res: Reservation, hours: number) {
  const cpuCoreHours = res.cpuCores * hours;
  const ramGbHours = (res.memoryMiB / 1024) * hours;
  const accelHours = res.accelerators * hours;
  const cost = cpuCoreHours * rates.cpuCoreHourCad + ramGbHours * rates.ramGbHourCad + accelHours * rates.gpuHourCad;
  return { cpuCoreHours, ramGbHours, accelHours, costCad: cost };
}

/** Reservation of an attempt: the task's stated needs, bounded by the worker it runs on. */
export function reservationOf(
  task: { requirements: unknown; accelVendor: string | null },
  worker: { cpuCores: number; memoryMiB: number; slots: number },
): Reservation {
  const req = (task.requirements ?? {}) as { cpuCores?: number; minMemoryMiB?: number };
  const slots = Math.max(worker.slots, 1);
  return {
    cpuCores: Math.max(1, Math.min(req.cpuCores ?? Math.max(1, Math.floor(worker.cpuCores / slots)), worker.cpuCores || 1)),
    memoryMiB: Math.max(req.minMemoryMiB ?? 0, Math.floor(worker.memoryMiB / slots)),
    accelerators: task.accelVendor ? 1 : 0,
    accelClass: task.accelVendor,
  };
}

/**
 * Accrues usage of one attempt up to `until` (from its last entry, or its start).
 * Idempotent for a given `until`: an interval is never counted twice.
 */
/** Running attempts are billed in intervals of at least this long (and at their end). */
export const MIN_INTERVAL_MS = 60_000;

export async function accrueUsage(
  tx: Db,
  r: Pick<Resources, 'config'>,
  attemptId: string,
  until: Date,
  opts: { final?: boolean } = {},
): Promise<number> {
  const a = await tx.attempt.findUnique({
    where: { id: attemptId },
    include: {
      task: { select: { jobId: true, requirements: true, accelVendor: true } },
      worker: { select: { cpuCores: true, memoryMiB: true, slots: true } },
    },
  });
  if (!a) return 0;
  // Index (attemptId, periodEnd): the last interval without sorting all of them.
  const last = await tx.usageEntry.findFirst({ where: { attemptId }, orderBy: { periodEnd: 'desc' }, select: { periodEnd: true } });
  const from = last?.periodEnd ?? a.startedAt ?? a.createdAt;
  if (until <= from) return 0;
  // One row a minute per running attempt, not one per tick: the table stays small and the
  // spending cap is still checked every minute (docs/architecture.md §9).
  if (!opts.final && until.getTime() - from.getTime() < MIN_INTERVAL_MS) return 0;
  const hours = (until.getTime() - from.getTime()) / 3600_000;
  const res = reservationOf(a.task, a.worker);
  const p = priceInterval(r.config.rates, res, hours);
  const cost = new P.Decimal(p.costCad.toFixed(6));
  const billable = !isContributorLoss(a);
  await tx.usageEntry.create({
    data: {
      jobId: a.task.jobId,
      attemptId,
      periodStart: from,
      periodEnd: until,
      cpuCoreHours: p.cpuCoreHours,
      ramGbHours: p.ramGbHours,
      accelHours: p.accelHours,
      accelClass: res.accelClass,
      costCad: cost,
      billable,
    },
  });
  // Job.costCad has the entries' precision (6 decimals), so adding is exact: no re-sum.
  await tx.job.update({
    where: { id: a.task.jobId },
    data: billable ? { costCad: { increment: cost } } : { lostCostCad: { increment: cost } },
  });
  return p.costCad;
}
