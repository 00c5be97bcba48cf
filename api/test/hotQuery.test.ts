/**
 * db/client.ts hotQuery: the hot-path statements go straight to the driver (a named prepared
 * statement) on the API's own client, and through Prisma inside a transaction; either way a
 * Date is stored as the same UTC instant whatever the process's time zone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { hotQuery, hotTransaction, pgTransaction } from '../src/db/client.js';
import { databaseUnavailable } from '../src/db/unavailable.js';
import { adminUrl, createTestDatabase } from './helpers/db.js';
import { touchWorker } from '../src/db/sql/touchWorker.js';
import { startTestApi } from './helpers/api.js';
import { addTask, createJobWithFile, createWorkerToken, CPU_CAPS, ProtocolWorker } from './helpers/protocolClient.js';

const api = await startTestApi();
const owner = await api.signUp();
const w = new ProtocolWorker(api, await createWorkerToken(api, owner.token), 'hot');
await w.hello({ slots: 2, capabilities: CPU_CAPS });
const { prisma } = api.server.db;
const tokenId = (await prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } })).tokenId;
const zone = process.env.TZ;
afterEach(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

describe('hotQuery', () => {
  it('stores a Date as its UTC instant in any time zone, straight and inside a transaction', async () => {
    process.env.TZ = 'America/New_York'; // pg would send local time with an offset, which a ::timestamp drops
    const at = new Date('2026-07-01T12:34:56.789Z');
    expect(await touchWorker(prisma, w.workerId, tokenId, at)).toEqual([{ status: 'ONLINE', slots: 2, live: 0 }]);
    expect((await prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } })).lastSeenAt.toISOString()).toBe(at.toISOString());
    const later = new Date('2026-07-01T18:00:00.000Z');
    await prisma.$transaction((tx) => touchWorker(tx, w.workerId, tokenId, later));
    expect((await prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } })).lastSeenAt.toISOString()).toBe(later.toISOString());
  });

  it("inside a transaction it is the transaction's: rolled back with it", async () => {
    const before = (await prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } })).lastSeenAt;
    await expect(
      prisma.$transaction(async (tx) => {
        await touchWorker(tx, w.workerId, tokenId, new Date('2030-01-01T00:00:00Z'));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } })).lastSeenAt).toEqual(before);
  });

  it("the claim (a named statement) hands out the lease's UTC instant in any time zone", async () => {
    process.env.TZ = 'Asia/Kolkata'; // +05:30: a timestamp read as local time would be off by hours
    const job = await createJobWithFile(api, owner.token);
    await addTask(api, job, { name: 'tz' });
    const before = Date.now();
    const [lease] = await w.claim({ max: 1 });
    const stored = await prisma.attempt.findUniqueOrThrow({ where: { id: lease!.attemptId } });
    expect(lease!.leaseExpiresAt).toBe(stored.leaseExpiresAt.toISOString());
    const leaseMs = api.server.resources.config.scheduler.leaseSec * 1000;
    expect(Date.parse(lease!.leaseExpiresAt)).toBeGreaterThanOrEqual(before + leaseMs - 1000);
    expect(Date.parse(lease!.leaseExpiresAt)).toBeLessThanOrEqual(Date.now() + leaseMs + 1000);
  });

  it("a bad statement is the driver's error, and the named statement still works after it", async () => {
    await expect(hotQuery(prisma, 'hotQueryTest', 'SELECT $1::uuid AS id', ['not-a-uuid'])).rejects.toThrow(/uuid/);
    expect(await hotQuery(prisma, 'hotQueryTest', 'SELECT $1::uuid AS id', [w.workerId])).toEqual([{ id: w.workerId }]);
  });
});

describe('hotTransaction', () => {
  const opts = { timeoutMs: 5000, maxWaitMs: 2000 };

  it('commits its statements together; a throw rolls back all of them, and the connection serves the next one', async () => {
    const name = async () => (await prisma.worker.findUniqueOrThrow({ where: { id: w.workerId } })).name;
    const rename = (to: string) => (q: Parameters<Parameters<typeof hotTransaction>[1]>[0]) =>
      q('hotTxRename', 'UPDATE "Worker" SET name = $2 WHERE id = $1::uuid', [w.workerId, to]);
    await expect(
      hotTransaction(
        prisma,
        async (q) => {
          await rename('rolled-back')(q);
          await q('hotTxBad', 'SELECT $1::uuid', ['not-a-uuid']);
        },
        opts,
      ),
    ).rejects.toThrow(/uuid/);
    expect(await name()).toBe('hot');
    await expect(
      hotTransaction(
        prisma,
        async (q) => {
          await rename('renamed')(q);
          throw new Error('changed my mind');
        },
        opts,
      ),
    ).rejects.toThrow('changed my mind');
    expect(await name()).toBe('hot');
    await hotTransaction(
      prisma,
      async (q) => {
        await rename('renamed')(q);
        await rename('hot')(q);
      },
      opts,
    );
    expect(await name()).toBe('hot');
    await hotTransaction(prisma, rename('committed'), opts);
    expect(await name()).toBe('committed');
    await hotTransaction(prisma, rename('hot'), opts);
  });

  it('gives up when no connection frees up within maxWaitMs — an outage (retry later), with a clear message — and the late connection goes back to the pool', async () => {
    const pool = new pg.Pool({ connectionString: api.databaseUrl, max: 1 });
    try {
      const held = await pool.connect();
      await expect(pgTransaction(pool, (q) => q('one', 'SELECT 1', []), { timeoutMs: 1000, maxWaitMs: 200 })).rejects.toSatisfy(
        (e: Error) => /no pooled connection free within 200 ms/.test(e.message) && databaseUnavailable(e) !== null,
      );
      held.release();
      expect(await pgTransaction(pool, (q) => q<{ n: number }>('two', 'SELECT 2 AS n', []), { timeoutMs: 1000, maxWaitMs: 2000 })).toEqual([
        { n: 2 },
      ]);
    } finally {
      await pool.end();
    }
  });

  it('a statement past timeoutMs is cancelled and the transaction rolled back', async () => {
    const pool = new pg.Pool({ connectionString: api.databaseUrl, max: 1 });
    try {
      await expect(pgTransaction(pool, (q) => q('slow', 'SELECT pg_sleep(5)', []), { timeoutMs: 200, maxWaitMs: 1000 })).rejects.toThrow(
        /statement timeout/,
      );
      expect(
        await pgTransaction(pool, (q) => q<{ n: number }>('after', 'SELECT 3 AS n', []), { timeoutMs: 1000, maxWaitMs: 1000 }),
      ).toEqual([{ n: 3 }]);
    } finally {
      await pool.end();
    }
  });

  it('a connection lost between two statements fails the transaction (no uncaught error event), and the pool serves the next one', async () => {
    const pool = new pg.Pool({ connectionString: api.databaseUrl, max: 1 });
    const killer = new pg.Client({ connectionString: api.databaseUrl });
    await killer.connect();
    try {
      await expect(
        pgTransaction(
          pool,
          async (q) => {
            const [row] = await q<{ pid: number }>('pid', 'SELECT pg_backend_pid() AS pid', []);
            await killer.query('SELECT pg_terminate_backend($1)', [row!.pid]);
            await new Promise((r) => setTimeout(r, 300)); // the socket closes while no statement runs
            return q('afterKill', 'SELECT 1', []);
          },
          { timeoutMs: 2000, maxWaitMs: 2000 },
        ),
      ).rejects.toThrow();
      expect(
        await pgTransaction(pool, (q) => q<{ n: number }>('fresh', 'SELECT 4 AS n', []), { timeoutMs: 2000, maxWaitMs: 2000 }),
      ).toEqual([{ n: 4 }]);
    } finally {
      await killer.end();
      await pool.end();
    }
  });

  it("a completion in another time zone bills from the attempt's own start (its times read as UTC instants)", async () => {
    process.env.TZ = 'Pacific/Auckland'; // +13:00 in December: a timestamp read as local time would be 13 h off
    const job = await createJobWithFile(api, owner.token);
    await addTask(api, job, { name: 'tz-complete' });
    const [lease] = await w.claim({ max: 1 });
    await prisma.attempt.update({ where: { id: lease!.attemptId }, data: { startedAt: new Date(Date.now() - 60_000), status: 'RUNNING' } });
    const r = await w.complete(lease!, { exitCode: 0 });
    expect(r.__typename, JSON.stringify(r)).toBe('Attempt');
    const attempt = await prisma.attempt.findUniqueOrThrow({ where: { id: lease!.attemptId } });
    const [entry] = await prisma.usageEntry.findMany({ where: { attemptId: lease!.attemptId } });
    expect(entry!.periodStart.toISOString()).toBe(attempt.startedAt!.toISOString());
    const hours = (entry!.periodEnd.getTime() - entry!.periodStart.getTime()) / 3600_000;
    expect(hours).toBeGreaterThan(0.9 / 60);
    expect(hours).toBeLessThan(5 / 60);
  });
});

describe("the API's sessions are in UTC whatever the server's zone", () => {
  it('a database set to Asia/Tokyo: a timestamptz stored into a timestamp column keeps its UTC instant', async () => {
    const url = await createTestDatabase();
    const admin = new pg.Client({ connectionString: adminUrl() });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE "${new URL(url).pathname.slice(1)}" SET TimeZone = 'Asia/Tokyo'`);
    } finally {
      await admin.end();
    }
    const tokyo = await startTestApi({}, { databaseUrl: url }); // stopped after the file (helpers/api.ts)
    const db = tokyo.server.db.prisma;
    expect(
      await hotQuery(
        db,
        'tz',
        `SELECT current_setting('TimeZone') AS tz, ('2026-01-01T00:00:00Z'::timestamptz)::timestamp::text AS stored`,
        [],
      ),
    ).toEqual([{ tz: 'UTC', stored: '2026-01-01 00:00:00' }]);
    // Through Prisma (the same pool) too: a job event's createdAt defaults to CURRENT_TIMESTAMP.
    const before = Date.now();
    const u = await tokyo.signUp();
    const job = await createJobWithFile(tokyo, u.token);
    const e = await db.jobEvent.findFirstOrThrow({ where: { jobId: job.jobId }, orderBy: { id: 'desc' } });
    expect(Math.abs(e.createdAt.getTime() - before)).toBeLessThan(60_000);
  });
});
