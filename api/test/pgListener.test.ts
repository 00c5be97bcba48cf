/**
 * The API's LISTEN connection (db/client.ts, PgListener) takes LISTEN and UNLISTEN one at a
 * time: many subscribers coming and going at once (long-polls ending together after a
 * database restart) must not overlap queries on its one client — pg deprecates that and
 * pg@9 removes it (the chaos suite's pg-restart fault printed the DeprecationWarning) — and
 * notifications still reach every channel listened to.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/client.js';
import { createTestDatabase } from './helpers/db.js';

const db = await openDatabase({ databaseUrl: await createTestDatabase(), dataDir: '/tmp', migrate: false });
afterAll(() => db.close());

describe('the LISTEN connection', () => {
  it('serialises concurrent LISTEN/UNLISTEN (no overlapping queries) and delivers to every channel', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => void warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const got = new Map<string, string>();
      const offs = await Promise.all(Array.from({ length: 12 }, (_, i) => db.listen(`chan_${i}`, (p) => void got.set(`chan_${i}`, p))));
      for (let i = 0; i < 12; i++) await db.notify(`chan_${i}`, `hello ${i}`);
      await new Promise((r) => setTimeout(r, 300));
      expect(got.size).toBe(12);
      expect(got.get('chan_7')).toBe('hello 7');
      await Promise.all(offs.map((off) => off()));
      await new Promise((r) => setTimeout(r, 50)); // warnings are emitted on the next tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => /already executing a query/.test(w))).toEqual([]);
  });
});
