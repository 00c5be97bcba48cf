import { describe, expect, it } from 'vitest';
import { parseRange } from './blobRoutes.js';

describe('parseRange (GET /blobs Range header)', () => {
  it('serves one range: from-to, from-, and the suffix -n, clamped to the blob', () => {
    expect(parseRange('bytes=0-0', 10)).toEqual({ start: 0, end: 0 });
    expect(parseRange('bytes=3-', 10)).toEqual({ start: 3, end: 9 });
    expect(parseRange('bytes=3-99', 10)).toEqual({ start: 3, end: 9 });
    expect(parseRange('bytes=-4', 10)).toEqual({ start: 6, end: 9 });
    expect(parseRange('bytes=-40', 10)).toEqual({ start: 0, end: 9 });
  });

  it('sends the whole blob for no header, another unit, several ranges or a reversed one (as RFC 9110 allows)', () => {
    for (const h of [undefined, '', 'items=0-1', 'bytes=0-1,4-5', 'bytes=5-2', 'bytes=-', 'bytes=a-b'])
      expect(parseRange(h, 10)).toBeNull();
  });

  it('answers 416 for a start at or past the end, and for any range of an empty blob', () => {
    expect(parseRange('bytes=10-', 10)).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', 10)).toBe('unsatisfiable');
    expect(parseRange('bytes=0-', 0)).toBe('unsatisfiable');
    expect(parseRange('bytes=-5', 0)).toBe('unsatisfiable');
  });
});
