import type { Db } from '../client.js';

/** One round trip to the database (the health check): throws when it is unreachable. */
export async function ping(db: Db): Promise<void> {
  await db.$queryRaw`SELECT 1`;
}
