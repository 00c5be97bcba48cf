import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseMetricLine, rankOfLine } from './metricLine.js';

describe('parseMetricLine', () => {
  it('reads the documented line', () => {
    expect(parseMetricLine('CHATGPU_METRIC {"step":10,"values":{"loss":0.5,"accuracy":0.9},"ts":1733140000.5}')).toEqual({
      step: 10,
      values: { loss: 0.5, accuracy: 0.9 },
      ts: 1733140000.5,
    });
  });

  it('is tolerant: CRLF, missing step/ts, numeric strings, booleans, Python NaN/Infinity dropped', () => {
    expect(parseMetricLine('CHATGPU_METRIC {"values":{"loss":"0.25","done":true}}\r\n')).toEqual({
      step: null,
      values: { loss: 0.25, done: 1 },
      ts: null,
    });
    expect(parseMetricLine('CHATGPU_METRIC {"step": 3, "values": {"loss": NaN, "lr": 0.001, "g": -Infinity, "h": Infinity}}')).toEqual({
      step: 3,
      values: { lr: 0.001 },
      ts: null,
    });
    expect(parseMetricLine('CHATGPU_METRIC {"step":1.5,"values":{"a":1,"b":null,"c":"abc","d":[1],"e":{}},"ts":-1}')).toEqual({
      step: null,
      values: { a: 1 },
      ts: null,
    });
    // a key that merely contains NaN is left alone
    expect(parseMetricLine('CHATGPU_METRIC {"values":{"NaN":1}}')?.values).toEqual({ NaN: 1 });
  });

  it('returns null for anything else', () => {
    for (const line of [
      'epoch 1 loss 0.5',
      'CHATGPU_METRIC',
      'CHATGPU_METRIC {"values":',
      'CHATGPU_METRIC not json',
      'CHATGPU_METRIC [1,2]',
      'CHATGPU_METRIC {"step":1}',
      'CHATGPU_METRIC {"values":{"loss":NaN}}',
      'CHATGPU_METRICS {"values":{"a":1}}',
      `CHATGPU_METRIC {"values":{"a":1},"pad":"${'x'.repeat(70_000)}"}`,
    ]) {
      expect(parseMetricLine(line), line.slice(0, 60)).toBeNull();
    }
  });
});

const pythonDir = fileURLToPath(new URL('../python', import.meta.url));
const python = '/usr/bin/python3';

describe.skipIf(!existsSync(python))('chatgpu.metrics (Python helper) round trip', () => {
  it('prints lines parseMetricLine reads back', () => {
    const out = execFileSync(
      python,
      [
        '-S',
        '-c',
        [
          'from chatgpu.metrics import log',
          'print("plain log line")',
          'log(step=10, loss=0.5, accuracy=0.9)',
          'log(loss=float("nan"), lr=1e-3, ok=True, name="x")',
          'r = log(bad=float("inf"))',
          'print("returned", r)',
        ].join('\n'),
      ],
      { env: { PYTHONPATH: pythonDir, PYTHONDONTWRITEBYTECODE: '1' }, encoding: 'utf8' },
    );
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(parseMetricLine(lines[0]!)).toBeNull();
    const first = parseMetricLine(lines[1]!)!;
    expect(first).toMatchObject({ step: 10, values: { loss: 0.5, accuracy: 0.9 } });
    expect(first.ts).toBeGreaterThan(1_600_000_000);
    expect(lines[1]).toMatch(/^CHATGPU_METRIC \{"step":10,"values":\{"loss":0\.5,"accuracy":0\.9\},"ts":/);
    expect(parseMetricLine(lines[2]!)).toMatchObject({ step: null, values: { lr: 0.001, ok: 1 } });
    expect(lines[3]).toBe('returned None');
  });
});

describe('metric lines under a distributed launcher (torchrun --tee prefixes)', () => {
  const body = '{"step":3,"values":{"loss":0.25}}';
  it("takes rank 0's prefixed metric line and leaves other ranks' as log output", () => {
    expect(parseMetricLine(`[default0]:CHATGPU_METRIC ${body}`)).toMatchObject({ step: 3, values: { loss: 0.25 } });
    expect(parseMetricLine(`[trainer0]:CHATGPU_METRIC ${body}`)).toMatchObject({ step: 3 });
    expect(parseMetricLine(`[default1]:CHATGPU_METRIC ${body}`)).toBeNull();
    expect(parseMetricLine(`[default10]:CHATGPU_METRIC ${body}`)).toBeNull();
    expect(parseMetricLine(`[default0]:plain log`)).toBeNull();
    // an ordinary line that happens to start with brackets is not a rank prefix
    expect(parseMetricLine(`[0]:CHATGPU_METRIC ${body}`)).toBeNull();
  });
  it('reads the rank of a line', () => {
    expect(rankOfLine('[default1]:epoch 2')).toEqual({ rank: 1, text: 'epoch 2' });
    expect(rankOfLine('epoch 2')).toEqual({ rank: null, text: 'epoch 2' });
  });
});

describe.skipIf(!existsSync(python))('chatgpu.metrics reports from rank 0 only', () => {
  const run = (rank: string | undefined) =>
    execFileSync(python, ['-S', '-c', 'from chatgpu.metrics import log\nprint("returned", log(step=1, loss=0.5) is not None)'], {
      env: { PYTHONPATH: pythonDir, PYTHONDONTWRITEBYTECODE: '1', ...(rank === undefined ? {} : { RANK: rank }) },
      encoding: 'utf8',
    })
      .trim()
      .split('\n');
  it('prints the line where RANK is unset, empty or 0, and nothing on another rank', () => {
    for (const r of [undefined, '', '0']) {
      const lines = run(r);
      expect(parseMetricLine(lines[0]!)).toMatchObject({ step: 1, values: { loss: 0.5 } });
      expect(lines[1]).toBe('returned True');
    }
    expect(run('1')).toEqual(['returned False']);
  });
});
