import type { Resources } from '../resources.js';

/** Whether a supervisor finding records a remedy tried for this task (its follow-up is then due). */
export async function hasRemedy(r: Pick<Resources, 'prisma'>, taskId: string): Promise<boolean> {
  const rows = await r.prisma.finding.findMany({ where: { source: 'supervisor', data: { path: ['taskId'], equals: taskId } }, select: { data: true } });
  return rows.some((f) => typeof (f.data as { remedy?: unknown } | null)?.remedy === 'string');
}
