import type { ClientBase as PgClient } from 'pg';
import type { Db, Prisma } from '../types.js';

/**
 * The tick records when it ran (one row; inside the tick's transaction, under its advisory
 * lock, so one writer at a time). GREATEST: a tick driven with an older `now` never moves it back.
 */
export async function recordTick(prisma: Db, now: Date): Promise<void> {
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
export async function resumeLeasesAfterOutage(
  prisma: Prisma,
  now: Date,
  gapMs: number,
  leaseSec: number,
): Promise<{ resumed: number; outageMs: number | null }> {
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

/**
 * After PostgreSQL itself restarted (a restart, a failover): while it was down no lease
 * could be renewed anywhere, and the workers that kept running come back with backoff,
 * some after their lease ran out. Run on every new connection of an API's pool (db/client.ts,
 * `onConnect`) — a restart drops every connection, so the first statements after it all
 * come through here, before any renewal, completion or tick can see such a lease as expired.
 * Within one lease of the server's start (`pg_postmaster_start_time()`), each live attempt
 * whose lease was last renewed before the server started (it runs out before start + lease)
 * and that no tick has judged (it ran out after the last tick) gets a lease until at least
 * `now` + lease. Outside that window it is a one-time filter: no rows are read. Bounded: a
 * worker that really vanished meanwhile is lost at most two leases after the restart.
 * Row locks in id order, as renewals and completions take them. Returns the attempts resumed.
 * Timestamps are UTC `timestamp(3)` (Prisma's), so the server's start is compared in UTC.
 */
export async function resumeLeasesAfterDatabaseRestart(client: Pick<PgClient, 'query'>, now: Date, leaseSec: number): Promise<number> {
  const res = await client.query(
    `WITH server AS (SELECT pg_postmaster_start_time() AT TIME ZONE 'UTC' AS started, $1::timestamptz AT TIME ZONE 'UTC' AS now, make_interval(secs => $2) AS lease),
     locked AS (
       SELECT a.id FROM "Attempt" a, server
       WHERE server.now < server.started + server.lease
         AND a.status IN ('LEASED', 'RUNNING')
         AND a."leaseExpiresAt" < server.started + server.lease
         AND a."leaseExpiresAt" < server.now + server.lease
         AND a."leaseExpiresAt" > COALESCE((SELECT "lastTickAt" FROM "SchedulerState" WHERE id = 1), '-infinity')
       ORDER BY a.id FOR NO KEY UPDATE OF a)
     UPDATE "Attempt" a SET "leaseExpiresAt" = server.now + server.lease
     FROM locked, server
     WHERE a.id = locked.id AND a.status IN ('LEASED', 'RUNNING') AND a."leaseExpiresAt" < server.now + server.lease`,
    [now.toISOString(), leaseSec],
  );
  return res.rowCount ?? 0;
}
