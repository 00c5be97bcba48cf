import type { Db } from '../client.js';

export interface LogRow {
  seq: number;
  stream: string;
  text: string;
  ts: Date;
}

/**
 * One statement for a batch of an attempt's log lines, as four arrays (unnest); lines already
 * stored (the same attempt and seq: a batch sent again) are skipped. Returns how many were new.
 *
 * Raw SQL, not `createMany`: Prisma builds and binds four parameters per row, and a 500-line
 * batch cost the API ≈ 50 ms of CPU that way (bench/logStream.ts); four array parameters are
 * one bind each.
 */
export async function insertLogLines(db: Db, attemptId: string, rows: LogRow[]): Promise<number> {
  return db.$executeRaw`
    INSERT INTO "LogChunk" ("attemptId", seq, stream, text, ts)
    SELECT ${attemptId}::uuid, u.seq, u.stream, u.text, to_timestamp(u.ms / 1000.0) AT TIME ZONE 'UTC'
    FROM unnest(${rows.map((r) => r.seq)}::int[], ${rows.map((r) => r.stream)}::text[], ${rows.map((r) => r.text)}::text[],
                ${rows.map((r) => r.ts.getTime())}::float8[]) AS u(seq, stream, text, ms)
    ON CONFLICT DO NOTHING`;
}
