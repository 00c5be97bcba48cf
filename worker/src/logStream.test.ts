import { describe, expect, it } from 'vitest';
import { LogStream, type Line } from './logStream.js';

function recordingSink() {
  const batches: Line[][] = [];
  return { batches, sink: { sendLogs: async (lines: Line[]) => void batches.push(lines), sendMetrics: async () => {} } };
}

describe('LogStream batches', () => {
  it('a backlog goes in batches of at most 2000 lines (the API\'s limit), in order, every seq once', async () => {
    const { batches, sink } = recordingSink();
    const s = new LogStream(sink);
    for (let i = 0; i < 4500; i++) s.system(`line ${i}`);
    await s.close();
    expect(batches.map((b) => b.length)).toEqual([2000, 2000, 500]);
    expect(batches.flat().map((l) => l.seq)).toEqual(Array.from({ length: 4500 }, (_, i) => i));
  });

  it('long lines: a batch stays within 4 MiB of text (far below the API\'s 32 MiB request limit)', async () => {
    const { batches, sink } = recordingSink();
    const s = new LogStream(sink);
    const long = 'x'.repeat(16 * 1024);
    for (let i = 0; i < 600; i++) s.system(long);
    await s.close();
    expect(batches.map((b) => b.length)).toEqual([256, 256, 88]);
    for (const b of batches) expect(b.reduce((n, l) => n + l.text.length, 0)).toBeLessThanOrEqual(4 * 1024 * 1024);
  });
});
