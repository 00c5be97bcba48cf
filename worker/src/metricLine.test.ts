import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseMetricLine } from './metricLine.js';

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
