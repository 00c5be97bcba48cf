/**
 * The database's client types, in one small module with no runtime code: what use cases and statements take.
 * db/client.ts (the factory) re-exports them.
 */
import type { PrismaClient } from '../generated/prisma/client.js';

/** The client (connection pool, `$transaction`, listeners). */
export type Prisma = PrismaClient;

/** A transaction's client (what `$transaction(async (tx) => …)` hands over). */
export type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

/** Either the client or a transaction: use cases and statements that may run inside a caller's transaction take this. */
export type Db = PrismaClient | Tx;
