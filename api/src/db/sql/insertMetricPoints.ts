import type { Db } from '../client.js';

export interface MetricRow {
  seq: number;
  name: string;
  step: number | null;
  value: number;
  ts: Date;
}

/**
 * One statement for a batch of an attempt's metric points; points already stored (the same
 * attempt, seq and name: a batch sent again) are skipped. Returns how many were new.
 *
 * Raw SQL, not `createMany`: Prisma writes a Float parameter through a 16-digit decimal
 * string, which changes the 17th significant digit (1.5550195398945026e+109 came back as
 * …503e+109) and makes Number.MAX_VALUE out of range for double precision. pg sends each
 * number of a float8[] as JavaScript's shortest round-trip form, so every finite double is
 * stored exactly (docs: issue 18's fuzzing of metric batches).
 */
export async function insertMetricPoints(db: Db, attemptId: string, rows: MetricRow[]): Promise<number> {
  return db.$executeRaw`
    INSERT INTO "MetricPoint" ("attemptId", seq, name, step, value, ts)
    SELECT ${attemptId}::uuid, u.seq, u.name, u.step, u.value, to_timestamp(u.ms / 1000.0) AT TIME ZONE 'UTC'
    FROM unnest(${rows.map((r) => r.seq)}::int[], ${rows.map((r) => r.name)}::text[], ${rows.map((r) => r.step)}::int[],
                ${rows.map((r) => r.value)}::float8[], ${rows.map((r) => r.ts.getTime())}::float8[]) AS u(seq, name, step, value, ms)
    ON CONFLICT DO NOTHING`;
}
