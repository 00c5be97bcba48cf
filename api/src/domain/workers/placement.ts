/**
 * Placement: which online worker could run a task, and whether leasing it now would pass its job's spending cap.
 * The claim's eligibility (db/sql/claimTasks.ts) as predicates the domain, the supervisor and the scheduler's
 * wait explanations (scheduler/explainWait.ts) share.
 */
import type { Db } from '../../db/types.js';
import { DEFAULT_TIMEOUT_SEC, type Rates } from '../../db/sql/claimTasks.js';
import { priceInterval, reservationOf } from '../billing/usage.js';
import { devicesNeeded, devicesOf } from './devices.js';
import { networkAllows, networkNeed, networkPolicyOf } from './networkPolicy.js';
import { torchAtLeast } from './torchVersion.js';

/** What placement needs of an online worker (selected once per pass). */
export type PlacementWorker = Awaited<ReturnType<typeof onlineWorkers>>[number];
export function onlineWorkers(prisma: Pick<Db, 'worker'>) {
  return prisma.worker.findMany({
    where: { status: 'ONLINE' },
    select: {
      id: true,
      name: true,
      ownerId: true,
      reputation: true,
      workloads: true,
      accelVendor: true,
      memoryMiB: true,
      accelMemMiB: true,
      capabilities: true,
      cpuCores: true,
      slots: true,
    },
  });
}

/** The placement a task needs: its columns the claim filters on. */
export interface PlacementTask {
  workload: string;
  accelVendor: string | null;
  minMemoryMiB: number;
  minAccelMemMiB: number;
  pinnedWorkerId: string | null;
  requirements: unknown;
  /** The task's owner: a worker without a sandbox (ownJobsOnly) runs only its own owner's tasks. */
  ownerId?: string;
}

/** A worker without a sandbox that takes only its owner's tasks (worker/src/sandbox.ts resolveSandbox). */
export function ownJobsOnly(capabilities: unknown): boolean {
  return (capabilities as { ownJobsOnly?: unknown } | null)?.ownJobsOnly === true;
}

/**
 * Could this worker claim the task (capacity and spending cap aside)? The claim's eligibility
 * (db/sql/claimTasks.ts) in one predicate: workload, accelerator, memory, pinned worker, a setup
 * phase only on a worker that installs, the workers its retries avoid, trust — checkable work
 * only above the threshold, replicas off the owners that already ran the result — the lowest
 * PyTorch a pin needs, another owner's task never on a worker without a sandbox (ownJobsOnly),
 * the devices a distributed launch needs on one worker (domain/workers/devices.ts), and the network
 * a task asks for only on a worker whose policy gives it (domain/workers/networkPolicy.ts).
 */
export function canRunOn(t: PlacementTask, w: PlacementWorker, minReputation: number): boolean {
  const installs = (w.capabilities as { install?: { enabled?: boolean } } | null)?.install?.enabled === true;
  const trust = trustOf(t.requirements);
  return (
    w.workloads.includes(t.workload) &&
    (!t.accelVendor || t.accelVendor === w.accelVendor) &&
    t.minMemoryMiB <= w.memoryMiB &&
    t.minAccelMemMiB <= w.accelMemMiB &&
    (!t.pinnedWorkerId || t.pinnedWorkerId === w.id) &&
    (!ownJobsOnly(w.capabilities) || t.ownerId === w.ownerId) &&
    (!needsSetup(t.requirements) || installs) &&
    !avoidedWorkers(t.requirements).includes(w.id) &&
    (!trust.checkable || w.reputation >= minReputation) &&
    w.reputation >= trust.minReputation &&
    !trust.avoidOwners.includes(w.ownerId) &&
    (!minTorchOf(t.requirements) || torchAtLeast(w.capabilities, minTorchOf(t.requirements)!)) &&
    (devicesNeeded(t.requirements) <= 1 || devicesNeeded(t.requirements) <= devicesOf(w, t.accelVendor)) &&
    networkAllows(networkPolicyOf(w.capabilities), networkNeed(t.requirements))
  );
}

export function trustOf(requirements: unknown): { checkable: boolean; avoidOwners: string[]; minReputation: number } {
  const req = (requirements ?? {}) as { checkable?: unknown; avoidOwners?: string[]; minReputation?: number };
  return {
    checkable: req.checkable !== undefined && req.checkable !== null,
    avoidOwners: req.avoidOwners ?? [],
    minReputation: req.minReputation ?? 0,
  };
}

export function minTorchOf(requirements: unknown): string | undefined {
  return (requirements as { minTorch?: string } | null)?.minTorch;
}

export function needsSetup(requirements: unknown): boolean {
  return typeof requirements === 'object' && requirements !== null && 'setup' in requirements;
}

/** A capped job's spending as the claim sees it: its cap, cost so far, and what its live attempts may still cost. */
export interface JobSpend {
  cap: number;
  spent: number;
  inflight: number;
}

/** How long the cap check projects a task to: its estimate (from a smoke run), else its time limit. */
const projectedSec = (s: unknown) => {
  const req = (s ?? {}) as { timeoutSec?: number; estimateSec?: number };
  return req.estimateSec ?? req.timeoutSec ?? DEFAULT_TIMEOUT_SEC;
};

/** Each job's spending read once per pass (many waiting tasks may share a job). */
export function jobSpends(prisma: Db, rates: Rates, now: Date): (jobId: string) => Promise<JobSpend | null> {
  const seen = new Map<string, Promise<JobSpend | null>>();
  const load = async (jobId: string): Promise<JobSpend | null> => {
    const job = await prisma.job.findUnique({ where: { id: jobId }, select: { spendingCapCad: true, costCad: true } });
    if (!job?.spendingCapCad) return null;
    const live = await prisma.attempt.findMany({
      where: { status: { in: ['LEASED', 'RUNNING'] }, task: { jobId } },
      select: {
        createdAt: true,
        task: { select: { requirements: true, accelVendor: true } },
        worker: { select: { cpuCores: true, memoryMiB: true, slots: true } },
      },
    });
    const inflight = live.reduce((sum, a) => {
      const left = Math.max(0, a.createdAt.getTime() + projectedSec(a.task.requirements) * 1000 - now.getTime()) / 3600_000;
      return sum + priceInterval(rates, reservationOf(a.task, a.worker), left).costCad;
    }, 0);
    return { cap: Number(job.spendingCapCad), spent: Number(job.costCad), inflight };
  };
  return (jobId) => {
    if (!seen.has(jobId)) seen.set(jobId, load(jobId));
    return seen.get(jobId)!;
  };
}

/**
 * Why leasing this task now would pass its job's spending cap (the claim's projection, on the
 * cheapest online worker that could run it), or null: the run supervisor's retry is refused for
 * the same reason the claim would not lease it.
 */
export async function capProblem(prisma: Db, rates: Rates, now: Date, t: Parameters<typeof capReason>[1]): Promise<string | null> {
  return capReason(jobSpends(prisma, rates, now), t, await onlineWorkers(prisma), rates);
}

/**
 * The spending cap, as the claim sees it (db/sql/claimTasks.ts): the job's cost so far, what
 * its live attempts may still cost to their time limits, and this task on the cheapest online
 * worker that could run it, to its time limit. A sentence when that passes the cap, else null.
 */
export async function capReason(
  spendOf: (jobId: string) => Promise<JobSpend | null>,
  t: { jobId: string; requirements: unknown; accelVendor: string | null; workload: string; minMemoryMiB: number; minAccelMemMiB: number },
  workers: { workloads: string[]; accelVendor: string; memoryMiB: number; accelMemMiB: number; cpuCores: number; slots: number }[],
  rates: Rates,
): Promise<string | null> {
  const spend = await spendOf(t.jobId);
  if (!spend) return null;
  const { cap, spent, inflight } = spend;
  const eligible = workers.filter(
    (w) =>
      w.workloads.includes(t.workload) &&
      (!t.accelVendor || t.accelVendor === w.accelVendor) &&
      t.minMemoryMiB <= w.memoryMiB &&
      t.minAccelMemMiB <= w.accelMemMiB,
  );
  if (!eligible.length) return null;
  const hours = projectedSec(t.requirements) / 3600;
  const own = Math.min(...eligible.map((w) => priceInterval(rates, reservationOf(t, w), hours).costCad));
  if (spent + inflight + own <= cap) return null;
  const cad = (v: number) => v.toFixed(v < 1 ? 4 : 2);
  const basis = (t.requirements as { estimateSec?: number } | null)?.estimateSec
    ? "the high end of its smoke run's estimate"
    : 'its time limit';
  return `Waiting: leasing it would pass the job's spending cap of ${cad(cap)} CAD — cost so far ${cad(spent)}, in-flight work up to ${cad(inflight)}, this task up to ${cad(own)} for ${basis} of ${Math.round(hours * 60 * 10) / 10} min. Raise the cap, or wait for the running work to finish.`;
}

/** Workers a task's retries stay off (requirements.avoidWorkers). */
export function avoidedWorkers(requirements: unknown): string[] {
  const a = (requirements as { avoidWorkers?: unknown } | null)?.avoidWorkers;
  return Array.isArray(a) ? a.filter((x): x is string => typeof x === 'string') : [];
}
