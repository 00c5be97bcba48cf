import { describe, expect, it } from 'vitest';
import { Coalescer } from './coalesce.js';

describe('Coalescer', () => {
  it('inputs queued while a run is in flight go together in the next run, never answered by the one that started before them', async () => {
    let state = 'before';
    const runs: { batch: number[]; state: string }[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const c = new Coalescer<number, string>(async (batch) => {
      const seen = state; // what the statement reads when it starts
      runs.push({ batch, state: seen });
      if (runs.length === 1) await gate;
      return batch.map((n) => `${n}:${seen}`);
    });
    const first = c.submit(1);
    // While the first run is in flight, the state changes (a token is revoked) and two calls arrive.
    state = 'after';
    const later = [c.submit(2), c.submit(3)];
    release();
    expect(await first).toBe('1:before');
    expect(await Promise.all(later)).toEqual(['2:after', '3:after']);
    expect(runs.map((r) => r.batch)).toEqual([[1], [2, 3]]);
  });

  it('a failed run rejects its own inputs only; the next run goes on; batches stop at the maximum', async () => {
    let calls = 0;
    const c = new Coalescer<number, number>(
      async (batch) => {
        calls++;
        if (batch.includes(0)) throw new Error('boom');
        return batch.map((n) => n * 10);
      },
      { max: 2 },
    );
    const a = c.submit(0);
    const rest = [c.submit(1), c.submit(2), c.submit(3)];
    await expect(a).rejects.toThrow('boom');
    expect(await Promise.all(rest)).toEqual([10, 20, 30]);
    expect(calls).toBe(3); // [0], [1, 2], [3]
  });

  it('with a spacing: a lone input after a quiet spell runs at once; inputs within the spacing of the last run wait and go together', async () => {
    const runs: number[][] = [];
    const c = new Coalescer<number, number>(
      async (batch) => {
        runs.push(batch);
        return batch;
      },
      { spacingMs: 200 },
    );
    const first = c.submit(1);
    expect(runs).toEqual([[1]]); // started in submit() itself: nothing waited
    expect(await first).toBe(1);
    const soon = [c.submit(2), c.submit(3)];
    await new Promise((r) => setTimeout(r, 20));
    const third = c.submit(4);
    expect(runs).toEqual([[1]]); // 2, 3 and 4 arrived within the spacing: none has run yet
    expect(await Promise.all([...soon, third])).toEqual([2, 3, 4]);
    expect(runs).toEqual([[1], [2, 3, 4]]);
    await new Promise((r) => setTimeout(r, 250)); // a quiet spell longer than the spacing
    const lone = c.submit(5);
    expect(runs).toEqual([[1], [2, 3, 4], [5]]);
    expect(await lone).toBe(5);
  });
});
