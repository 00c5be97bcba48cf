/** The job timeline's events (useJobActivity): late events (NOTIFY order is not id order) are kept, in id order, once each. */
import { describe, expect, it } from 'vitest';
import { mergeEvents, takeUnseen } from '../src/features/jobs/useJobActivity';

const ev = (id: number, kind = 'attempt.status') => ({ id: String(id), kind });

describe('the job timeline: takeUnseen + mergeEvents', () => {
  it('keeps an event that arrives after a newer one, in its place by id', () => {
    const seen = new Set<string>();
    let list = mergeEvents([], takeUnseen([ev(10), ev(12)], seen));
    // The claim's LEASED event (id 11) is announced after the attempt's RUNNING (12).
    const late = takeUnseen([ev(11, 'attempt.leased')], seen);
    expect(late.map((e) => e.id)).toEqual(['11']);
    list = mergeEvents(list, late);
    expect(list.map((e) => e.id)).toEqual(['10', '11', '12']);
  });

  it('drops what it has seen (a replay overlapping the live stream, an id twice in one batch) and sorts a batch', () => {
    const seen = new Set<string>();
    let list = mergeEvents([], takeUnseen([ev(3), ev(1), ev(2), ev(2)], seen));
    expect(list.map((e) => e.id)).toEqual(['1', '2', '3']);
    expect(takeUnseen([ev(1), ev(3)], seen)).toEqual([]);
    list = mergeEvents(list, takeUnseen([ev(3), ev(4)], seen));
    expect(list.map((e) => e.id)).toEqual(['1', '2', '3', '4']);
  });

  it('compares ids as integers, not strings (bigint ids past 2^53 included)', () => {
    const seen = new Set<string>();
    const big = '9007199254740993';
    const list = mergeEvents(mergeEvents([], takeUnseen([ev(9), { id: big, kind: 'x' }], seen)), takeUnseen([ev(10)], seen));
    expect(list.map((e) => e.id)).toEqual(['9', '10', big]);
  });

  it('is pure: merging leaves the list it was given as it was', () => {
    const list = [ev(1), ev(3)];
    const merged = mergeEvents(list, [ev(2)]);
    expect(list.map((e) => e.id)).toEqual(['1', '3']);
    expect(merged.map((e) => e.id)).toEqual(['1', '2', '3']);
    expect(mergeEvents(list, [])).toBe(list);
  });
});
