/**
 * A job planned while no worker was online (right after start, or on an empty network) had to guess
 * its hardware: a CUDA-hard-wired script is planned for an NVIDIA worker and waits. When workers come
 * and none of them can run its queued work — and nothing of it has started — the job goes back to
 * the planner (the engine's `replan`, within its bound), which plans for the workers that are there
 * (a migration, another class). Called by the scheduler tick inside its locked transaction;
 * idempotent: a replanned job is PLANNING, and the new plan records that workers were online.
 */
import type { Db } from '../../db/client.js';
import type { Resources } from '../resources.js';
import { networkCapacity } from '../workers/networkCapacity.js';
import { replanJob, replanProblem } from '../supervision/supervisorActions.js';

export async function replanForNewWorkers(
  tx: Db,
  r: Pick<Resources, 'config'>,
  now: Date,
): Promise<{ jobId: string; eventIds: string[]; workers: string[] }[]> {
  const guessed = await tx.jobEvent.findMany({
    where: { kind: 'plan.created', payload: { path: ['withoutWorkers'], equals: true }, job: { status: 'RUNNING' } },
    select: { jobId: true, payload: true, job: { select: { currentPlanId: true } } },
  });
  if (guessed.length === 0) return [];
  const cap = await networkCapacity({ prisma: tx });
  if (cap.classes.length === 0) return [];
  const out: { jobId: string; eventIds: string[]; workers: string[] }[] = [];
  for (const g of guessed) {
    const p = g.payload as { planId?: string; hardware?: { workload?: string; accelVendor?: string | null } };
    if (p.planId !== g.job.currentPlanId || !p.hardware?.workload) continue;
    const fits = cap.classes.some(
      (c) => c.workloads.includes(p.hardware!.workload!) && (!p.hardware!.accelVendor || c.accelVendor === p.hardware!.accelVendor),
    );
    if (fits) continue;
    // Only while nothing of the plan has run: a started run is the supervisor's to judge.
    if ((await tx.task.count({ where: { jobId: g.jobId, OR: [{ attemptCount: { gt: 0 } }, { status: { not: 'QUEUED' } }] } })) > 0)
      continue;
    if (await replanProblem(tx, g.jobId)) continue;
    const evidence = `It was planned while no worker was online, for ${p.hardware.workload}${p.hardware.accelVendor ? ` on ${p.hardware.accelVendor}` : ''}; now online: ${cap.summary}, none of which runs that. Plan for the workers that are here.`;
    const res = await replanJob(tx, r, now, g.jobId, evidence);
    out.push({ jobId: g.jobId, eventIds: res.eventIds, workers: res.workers });
  }
  return out;
}
