import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { HIGH_WATER, LogStream, type Line } from './logStream.js';

const dir = mkdtempSync(path.join(tmpdir(), 'logstream-test-'));
let n = 0;
const spool = () => path.join(dir, `spool-${n++}.log`);

function recordingSink() {
  const batches: Line[][] = [];
  return { batches, sink: { sendLogs: async (lines: Line[]) => void batches.push(lines), sendMetrics: async () => {} } };
}

/** A sink whose sends wait until `release()`: an API that is slow or unreachable. */
function blockedSink() {
  const batches: Line[][] = [];
  let release!: () => void;
  const open = new Promise<void>((r) => (release = r));
  return {
    batches,
    release,
    sink: { sendLogs: async (lines: Line[]) => void (await open, batches.push(lines)), sendMetrics: async () => {} },
  };
}

const tick = () => new Promise((r) => setTimeout(r, 20));

describe('LogStream batches', () => {
  it("a backlog goes in batches of at most 2000 lines (the API's limit), in order, every seq once", async () => {
    const { batches, sink } = recordingSink();
    const s = new LogStream(sink, { spoolPath: spool() });
    for (let i = 0; i < 4500; i++) s.system(`line ${i}`);
    await s.close();
    expect(batches.map((b) => b.length)).toEqual([2000, 2000, 500]);
    expect(batches.flat().map((l) => l.seq)).toEqual(Array.from({ length: 4500 }, (_, i) => i));
  });

  it("long lines: a batch stays within 4 MiB of text (far below the API's 32 MiB request limit)", async () => {
    const { batches, sink } = recordingSink();
    const s = new LogStream(sink, { spoolPath: spool() });
    const long = 'x'.repeat(16 * 1024);
    for (let i = 0; i < 600; i++) s.system(long);
    await s.close();
    // 256 lines of 16 KiB fill 4 MiB: no batch holds more (a loaded machine may send an early, smaller first one).
    expect(batches.every((b) => b.length <= 256)).toBe(true);
    expect(batches.length).toBeGreaterThanOrEqual(3);
    for (const b of batches) expect(b.reduce((n, l) => n + l.text.length, 0)).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(batches.flat().map((l) => l.seq)).toEqual(Array.from({ length: 600 }, (_, i) => i));
  });
});

describe('LogStream batch windows', () => {
  it('a steady printer: the first lines go soon, then one batch of lines and one of metrics a window, not one per line', async () => {
    const logs: { at: number; lines: Line[] }[] = [];
    const metrics: number[] = [];
    const sink = {
      // A send that takes a while: lines printed meanwhile wait for the next window.
      sendLogs: async (lines: Line[]) => void (logs.push({ at: Date.now(), lines }), await new Promise((r) => setTimeout(r, 30))),
      sendMetrics: async () => void metrics.push(Date.now()),
    };
    const s = new LogStream(sink, { spoolPath: spool(), firstFlushMs: 50, flushMs: 400 });
    const out = new PassThrough();
    s.attach(out, 'stdout');
    const t0 = Date.now();
    // ≈ 1.2 s of a training loop: a line and a metric line every 20 ms.
    for (let i = 0; i < 60; i++) {
      out.write(`step ${i}\nCHATGPU_METRIC {"step":${i},"values":{"loss":${1 / (i + 1)}}}\n`);
      await tick();
    }
    const elapsed = Date.now() - t0;
    out.end();
    await s.close();
    expect(logs[0]!.at - t0, 'the first batch goes after the first window').toBeLessThan(400);
    // One batch per 400 ms window over the run (timers only fire later on a busy machine), plus close()'s.
    expect(logs.length).toBeLessThanOrEqual(Math.ceil(elapsed / 400) + 2);
    expect(metrics.length).toBeLessThanOrEqual(Math.ceil(elapsed / 400) + 2);
    for (let i = 2; i < logs.length - 1; i++) expect(logs[i]!.at - logs[i - 1]!.at, `batch ${i}`).toBeGreaterThanOrEqual(390);
    expect(logs.flatMap((b) => b.lines).map((l) => l.seq)).toEqual(Array.from({ length: 120 }, (_, i) => i));
  });

  it('a fast printer (10,000 lines a second): batches of 2000 lines, not a full batch and a few stragglers each time', async () => {
    // An API that takes 60 ms a batch: lines keep arriving while one is sent.
    const batches: Line[][] = [];
    const sink = {
      sendLogs: async (lines: Line[]) => void (batches.push(lines), await new Promise((r) => setTimeout(r, 60))),
      sendMetrics: async () => {},
    };
    const s = new LogStream(sink, { spoolPath: spool() });
    const out = new PassThrough();
    s.attach(out, 'stdout');
    // 700 lines every 70 ms (a pipe's chunks do not fall on batch boundaries).
    for (let i = 0; i < 20; i++) {
      out.write(`${Array.from({ length: 700 }, (_, j) => `line ${i * 700 + j}`).join('\n')}\n`);
      await new Promise((r) => setTimeout(r, 70));
    }
    out.end();
    await s.close();
    expect(batches.flat().map((l) => l.seq)).toEqual(Array.from({ length: 14_000 }, (_, i) => i));
    // 7 full batches; the first window (250 ms) may send one small batch first, close() the rest.
    expect(batches.filter((b) => b.length === 2000).length).toBeGreaterThanOrEqual(6);
    expect(batches.length).toBeLessThanOrEqual(9);
  });

  it('a full batch (2000 lines) goes at once, without waiting for its window', async () => {
    const { batches, sink } = recordingSink();
    const s = new LogStream(sink, { spoolPath: spool(), firstFlushMs: 60_000, flushMs: 60_000 });
    for (let i = 0; i < 2000; i++) s.system(`line ${i}`);
    for (let t = 0; t < 100 && batches.length === 0; t++) await tick();
    expect(batches.map((b) => b.length)).toEqual([2000]);
    await s.close();
  });
});

describe('LogStream spool: the program is not slowed by the API', () => {
  it('while the API takes nothing, the pipes keep flowing into the spool; every line arrives later, in arrival order, stamped when it arrived', async () => {
    const { batches, sink, release } = blockedSink();
    const path0 = spool();
    const s = new LogStream(sink, { spoolPath: path0 });
    const out = new PassThrough();
    const err = new PassThrough();
    s.attach(out, 'stdout');
    s.attach(err, 'stderr');
    const line = 'y'.repeat(99);
    // 60,000 lines: three times the in-memory backlog at which the old LogStream paused the pipes.
    for (let i = 0; i < 60; i++) {
      out.write(`${Array.from({ length: 1000 }, (_, j) => `${i * 1000 + j} ${line}`).join('\n')}\n`);
      if (i === 30) err.write('half way\n');
      await tick();
      expect(out.isPaused(), `stdout paused after ${i + 1} blocks`).toBe(false);
    }
    s.system('worker: the command exited with code 0');
    out.end();
    err.end();
    await tick();
    expect(statSync(path0).size).toBeGreaterThan(60_000 * 100);
    const releasedAt = Date.now();
    release();
    await s.close();
    const all = batches.flat();
    expect(all.map((l) => l.seq)).toEqual(Array.from({ length: 60_002 }, (_, i) => i));
    const stdout = all.filter((l) => l.stream === 'stdout');
    expect(stdout.map((l) => Number(l.text.split(' ')[0]))).toEqual(Array.from({ length: 60_000 }, (_, i) => i));
    // In arrival order across streams: stderr's line after stdout's first 31 blocks, the worker's line last.
    expect(all.findIndex((l) => l.stream === 'stderr')).toBe(31_000);
    expect(all.at(-1)).toMatchObject({ stream: 'system', text: 'worker: the command exited with code 0' });
    expect(Math.max(...all.map((l) => Date.parse(l.ts)))).toBeLessThanOrEqual(releasedAt);
    expect(existsSync(path0), 'close() removes the spool').toBe(false);
  });

  it('past the spool limit the pipes are paused (the run slows rather than fill the disk), and resumed once it drains; nothing lost', async () => {
    const { batches, sink, release } = blockedSink();
    const s = new LogStream(sink, { spoolPath: spool(), spoolLimit: 256 * 1024 });
    const out = new PassThrough({ highWaterMark: 1024 });
    s.attach(out, 'stdout');
    let i = 0;
    while (!out.isPaused() && i < 60_000) {
      out.write(`line ${i++}\n`.padStart(100, '.'));
      if (i % 500 === 0) await tick();
    }
    expect(out.isPaused(), 'paused at the spool limit').toBe(true);
    // Past the lines held in memory (HIGH_WATER) and the spool limit.
    expect(i).toBeGreaterThan(HIGH_WATER + (256 * 1024) / 100);
    release();
    for (let t = 0; t < 100 && out.isPaused(); t++) await tick();
    expect(out.isPaused(), 'resumed once the spool drained').toBe(false);
    out.end();
    await s.close();
    expect(batches.flat().map((l) => l.text.trim().replace(/^\.*/, ''))).toEqual(Array.from({ length: i }, (_, k) => `line ${k}`));
  });

  it('a spool that cannot be written (no such folder, disk full) falls back to memory: nothing lost', async () => {
    const { batches, sink } = recordingSink();
    const s = new LogStream(sink, { spoolPath: path.join(dir, 'missing', 'spool.log') });
    const out = new PassThrough();
    s.attach(out, 'stdout');
    s.system('before');
    out.write('a\nb\npartial');
    out.end(' line\n');
    s.system('after');
    await tick();
    await s.close();
    expect(batches.flat().map((l) => [l.stream, l.text])).toEqual([
      ['system', 'before'],
      ['stdout', 'a'],
      ['stdout', 'b'],
      ['stdout', 'partial line'],
      ['system', 'after'],
    ]);
  });

  it('a line without a newline at the end of the output is still sent; a multi-byte character split across chunks is kept whole', async () => {
    const { batches, sink } = recordingSink();
    const s = new LogStream(sink, { spoolPath: spool() });
    const out = new PassThrough();
    s.attach(out, 'stdout');
    const euro = Buffer.from('€ sign\nlast');
    out.write(euro.subarray(0, 1));
    await tick();
    out.write(euro.subarray(1));
    out.end();
    await tick();
    await s.close();
    expect(batches.flat().map((l) => l.text)).toEqual(['€ sign', 'last']);
  });
});
