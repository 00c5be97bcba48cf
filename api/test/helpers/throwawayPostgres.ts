import { afterAll } from 'vitest';
import { startThrowawayPostgres as start, type ThrowawayPostgres } from '../../../bench/lib/throwawayPostgres.js';

export type { ThrowawayPostgres };

/**
 * A PostgreSQL cluster of this test file's own (bench/lib/throwawayPostgres.ts), for tests
 * that stop and restart the database — never the shared server. Removed after the file's tests.
 */
export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const pg = await start();
  afterAll(() => pg.remove());
  return pg;
}
