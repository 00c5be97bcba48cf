import type { Db } from '../client.js';

/**
 * Takes the scheduler tick's advisory lock for the rest of the caller's transaction, without
 * waiting: one API process runs a tick at a time; the others find it taken and skip theirs
 * (a transaction-scoped lock is released by the commit or the rollback, even a crash's).
 */
export async function tryTickLock(tx: Db, key: number): Promise<boolean> {
  const [lock] = await tx.$queryRaw<{ ok: boolean }[]>`SELECT pg_try_advisory_xact_lock(${key}) AS ok`;
  return lock?.ok === true;
}
