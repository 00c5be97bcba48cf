import type { Db } from '../client.js';

export interface LogRow {
  seq: number;
  stream: string;
  text: string;
  /** When the line was printed, ms since the epoch. */
  ms: number;
}

/**
 * One statement for a batch of an attempt's log lines, passed as one JSON parameter
 * (json_to_recordset); lines already stored (the same attempt and seq: a batch sent again) are
 * skipped. Returns how many were new.
 *
 * Not `createMany` (Prisma builds and binds four parameters per row: a 500-line batch cost the
 * API ≈ 50 ms of CPU), and not four array parameters either: Prisma and pg walk every element
 * of an array parameter to encode it, while JSON.stringify is one native call and PostgreSQL
 * parses the JSON (bench/logStream.ts).
 */
export async function insertLogLines(db: Db, attemptId: string, rows: LogRow[]): Promise<number> {
  return db.$executeRaw`
    INSERT INTO "LogChunk" ("attemptId", seq, stream, text, ts)
    SELECT ${attemptId}::uuid, x.seq, x.stream, x.text, to_timestamp(x.ms / 1000.0) AT TIME ZONE 'UTC'
    FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(seq int, stream text, text text, ms float8)
    ON CONFLICT DO NOTHING`;
}
