import type { Resources } from '../resources.js';

/**
 * Whether a supervisor finding records a remedy tried for this task — or, for the main run, a
 * replan of its job (the new plan's run is a new task) — so its follow-up is due.
 */
export async function hasRemedy(r: Pick<Resources, 'prisma'>, taskId: string): Promise<boolean> {
  const task = await r.prisma.task.findUnique({ where: { id: taskId }, select: { jobId: true, role: true } });
  if (!task) return false;
  const mainRun = task.role === 'RUN';
  const rows = await r.prisma.finding.findMany({
    where: {
      jobId: task.jobId,
      source: 'supervisor',
      OR: [{ data: { path: ['taskId'], equals: taskId } }, ...(mainRun ? [{ data: { path: ['remedy'], equals: 'replan' } }] : [])],
    },
    select: { data: true },
  });
  return rows.some((f) => typeof (f.data as { remedy?: unknown } | null)?.remedy === 'string');
}
