/**
 * What the supervisor sees of a job (its `get_job` tool): status, plan, criteria, tasks
 * and their attempts (error class, message, worker, cost billed and lost), cost so far
 * against the cap (and the smoke run's estimate), the
 * latest job events and the findings saved by earlier supervisor runs.
 */
import type { Resources } from '../resources.js';

const RECENT_EVENTS = 20;

export async function jobReport(r: Pick<Resources, 'prisma'>, jobId: string) {
  const job = await r.prisma.job.findUniqueOrThrow({
    where: { id: jobId },
    include: {
      currentPlan: { select: { version: true, summary: true, command: true, requirements: true } },
      tasks: {
        orderBy: { createdAt: 'asc' },
        include: {
          pinnedWorker: { select: { id: true, name: true } },
          attempts: { orderBy: { number: 'asc' }, include: { worker: { select: { id: true, name: true, memoryMiB: true } } } },
        },
      },
      findings: { orderBy: { createdAt: 'asc' } },
    },
  });
  // Cost per attempt: billed to the user, or the contributor's loss (lost work).
  const usage = await r.prisma.usageEntry.groupBy({ by: ['attemptId', 'billable'], where: { jobId }, _sum: { costCad: true } });
  const costOf = (attemptId: string, billable: boolean) =>
    Number(usage.find((u) => u.attemptId === attemptId && u.billable === billable)?._sum.costCad ?? 0);
  const events = await r.prisma.jobEvent.findMany({
    where: { jobId, kind: { not: 'agent.item' } },
    orderBy: { id: 'desc' },
    take: RECENT_EVENTS,
  });
  return {
    id: job.id,
    status: job.status,
    statusReason: job.statusReason,
    plan: job.currentPlan,
    acceptanceCriteria: job.acceptanceCriteria,
    costCad: job.costCad.toString(),
    spendingCapCad: job.spendingCapCad?.toString() ?? null,
    /** Work lost on contributors' workers: not charged to the user (not in costCad). */
    lostCostCad: job.lostCostCad.toString(),
    /** The full run's estimate from its smoke run (duration and cost ranges), if one ran. */
    estimate: job.estimate,
    tasks: job.tasks.map((t) => ({
      id: t.id,
      name: t.name,
      kind: t.kind,
      role: t.role,
      status: t.status,
      statusReason: t.statusReason,
      workload: t.workload,
      accelVendor: t.accelVendor,
      minMemoryMiB: t.minMemoryMiB,
      pinnedWorker: t.pinnedWorker,
      attemptCount: t.attemptCount,
      /** Of attemptCount, those that ended in an infrastructure error: not counted against maxAttempts. */
      infraFailures: t.infraFailures,
      maxAttempts: t.maxAttempts,
      attempts: t.attempts.map((a) => ({
        id: a.id,
        number: a.number,
        status: a.status,
        exitCode: a.exitCode,
        errorClass: a.errorClass,
        errorMessage: a.errorMessage,
        costCad: costOf(a.id, true),
        lostCostCad: costOf(a.id, false),
        worker: { id: a.worker.id, name: a.worker.name, memoryMiB: a.worker.memoryMiB },
      })),
    })),
    recentEvents: events.reverse().map((e) => ({ id: e.id.toString(), kind: e.kind, at: e.createdAt.toISOString(), payload: e.payload })),
    findings: job.findings.map((f) => ({ id: f.id, at: f.createdAt.toISOString(), source: f.source, text: f.text, data: f.data })),
  };
}

export type JobReport = Awaited<ReturnType<typeof jobReport>>;
