import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StdoutFile } from './stdoutFile.js';

const root = mkdtempSync(join(tmpdir(), 'chatgpu-stdoutfile-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** Feeds `chunks` (as the pipe would cut them) and returns the file's bytes and the summary. */
function feed(chunks: (string | Buffer)[], limit = 1 << 20) {
  const f = new StdoutFile(join(root, `s${++n}`), limit);
  for (const c of chunks) f.write(Buffer.isBuffer(c) ? c : Buffer.from(c));
  const summary = f.close();
  return { text: readFileSync(f.path, 'utf8'), bytes: readFileSync(f.path), summary };
}

const metric = 'CHATGPU_METRIC {"step": 1, "values": {"loss": 0.5}}';

describe('StdoutFile', () => {
  it('drops metric lines however the pipe cuts them, keeps every other byte', () => {
    const all = `a\n${metric}\nb\r\n  ${metric}\nc`;
    // every cut point, one chunk boundary each
    for (let i = 0; i <= all.length; i++) expect(feed([all.slice(0, i), all.slice(i)]).text).toBe('a\nb\r\nc');
    expect(feed(all.split('')).text).toBe('a\nb\r\nc');
  });

  it('keeps lines that only look like metric lines: a bad body, another word, a prefix cut short', () => {
    for (const line of [
      'CHATGPU_METRIC not json',
      'CHATGPU_METRICS {"values": {"a": 1}}',
      'CHATGPU_MET',
      'CHATGPU_METRIC {"values": {}}',
      '',
    ]) {
      expect(feed([`${line}\nnext\n`]).text).toBe(`${line}\nnext\n`);
    }
  });

  it('a metric line at the very end without a newline is dropped; a long line is written as it comes', () => {
    expect(feed(['x\n', metric]).text).toBe('x\n');
    const long = `CHATGPU_METRIC ${'y'.repeat(70 * 1024)}`;
    const r = feed([long.slice(0, 40_000), long.slice(40_000), '\nz']);
    expect(r.text).toBe(`${long}\nz`);
  });

  it('keeps bytes that are not UTF-8 as they were', () => {
    const raw = Buffer.from([0xff, 0xfe, 0x0a, 0xc3]);
    expect(feed([raw.subarray(0, 3), raw.subarray(3)]).bytes.equals(raw)).toBe(true);
  });

  it('stops at the limit and says so', () => {
    const r = feed(['12345\n', '67890\n'], 8);
    expect(r.text).toBe('12345\n67');
    expect(r.summary).toEqual({ bytes: 8, cut: true, error: null });
    expect(feed(['1234\n'], 5).summary).toEqual({ bytes: 5, cut: false, error: null });
  });

  it('a write that fails (full disk) stops the file, not the caller', () => {
    const f = new StdoutFile('/dev/full', 1 << 20);
    f.write(Buffer.from('hello\n'));
    f.write(Buffer.from('more\n'));
    expect(f.close()).toMatchObject({ bytes: 0, cut: false, error: expect.stringMatching(/ENOSPC/) });
  });
});
