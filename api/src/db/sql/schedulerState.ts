import type { Prisma } from '../client.js';

/**
 * The tick records when it ran (one row; inside the tick's transaction, under its advisory
 * lock, so one writer at a time). GREATEST: a tick driven with an older `now` never moves it back.
 */
export async function recordTick(prisma: Prisma, now: Date): Promise<void> {
  await prisma.$executeRaw`
    INSERT INTO "SchedulerState" (id, "lastTickAt") VALUES (1, ${now})
    ON CONFLICT (id) DO UPDATE SET "lastTickAt" = GREATEST("SchedulerState"."lastTickAt", EXCLUDED."lastTickAt")`;
}

/**
 * After an outage (no tick on any API process for longer than `gapMs` before `now`), the
 * live attempts whose lease ran out after the last tick — while no process was there to
 * renew it — get a fresh lease from `now`: their workers kept running and reconnect with
 * backoff. One statement; the UPDATE's row locks are all it takes. Returns the attempts
 * resumed and the outage's length (null when there was none).
 */
export async function resumeLeasesAfterOutage(prisma: Prisma, now: Date, gapMs: number, leaseSec: number): Promise<{ resumed: number; outageMs: number | null }> {
  const [state] = await prisma.$queryRaw<{ lastTickAt: Date }[]>`SELECT "lastTickAt" FROM "SchedulerState" WHERE id = 1`;
  if (!state) return { resumed: 0, outageMs: null };
  const outageMs = now.getTime() - state.lastTickAt.getTime();
  if (outageMs <= gapMs) return { resumed: 0, outageMs: null };
  const leaseUntil = new Date(now.getTime() + leaseSec * 1000);
  const resumed = await prisma.$executeRaw`
    UPDATE "Attempt" SET "leaseExpiresAt" = ${leaseUntil}
    WHERE status IN ('LEASED', 'RUNNING') AND "leaseExpiresAt" > ${state.lastTickAt} AND "leaseExpiresAt" < ${leaseUntil}`;
  return { resumed, outageMs };
}
