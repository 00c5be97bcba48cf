import { describe, expect, it } from 'vitest';
import { estimateFromSmokeRun, estimateRequirement, withActual } from './estimate.js';

const r = { config: { rates: { cpuCoreHourCad: 0.02, ramGbHourCad: 0.003, gpuHourCad: 0.4 } } } as never;
const worker = { name: 'w', cpuCores: 4, memoryMiB: 8192, slots: 1 };
const task = { requirements: {}, accelVendor: null };
const start = Date.parse('2026-12-03T10:00:00Z');
const at = (sec: number) => new Date(start + sec * 1000);

describe('estimateFromSmokeRun', () => {
  it('start-up + rate per step × scaled steps + tail, from progress points', () => {
    // start-up 3 s, then 2 s per epoch for 2 epochs, then 1 s of saving: 8 s in all.
    const points = [
      { name: 'loss', step: 1, ts: at(5) },
      { name: 'loss', step: 2, ts: at(7) },
    ];
    const e = estimateFromSmokeRun(
      r,
      { usage: { runSeconds: 8, runStartedAt: start, peakMemoryMiB: 100 }, outputs: [{ size: 10 }, { size: 5 }], points, worker, task },
      { unit: 'epoch', bounded: 2, full: 20 },
    )!;
    expect(e.durationSec).toBe(3 + 20 * 2 + 1);
    expect(e.lowSec).toBe(3 + 20 * 2 * 0.8 + 1);
    expect(e.highSec).toBe(3 + 20 * 2 * 1.25 + 1);
    expect(e.measured).toMatchObject({ secondsPerStep: 2, outputBytes: 15, peakMemoryMiB: 100 });
    // 4 cores + 8 GiB for 44 s at the configured rates.
    expect(e.costCad).toBeCloseTo((44 / 3600) * (4 * 0.02 + 8 * 0.003), 10);
    expect(e.basis).toBe(
      'Smoke run on w: 2 of 20 epochs in 8.0 s, peak memory 100 MiB (sampled); 2.0 s per step from its progress metrics, start-up 3.0 s, ×10.',
    );
  });

  it('without progress the whole smoke run scales: an upper bound, down to the smoke run itself', () => {
    const e = estimateFromSmokeRun(
      r,
      { usage: { runSeconds: 8, runStartedAt: start, peakMemoryMiB: null }, outputs: [], points: [], worker, task },
      { unit: 'step', bounded: 20, full: 200 },
    )!;
    expect([e.lowSec, e.durationSec, e.highSec]).toEqual([8, 80, 80]);
    expect(e.basis).toMatch(/the whole smoke run ×10 \(no progress metrics: an upper bound, start-up included\)\.$/);
  });

  it('no scale: the smoke run itself; no run time reported: no estimate', () => {
    expect(estimateFromSmokeRun(r, { usage: { runSeconds: 5 }, outputs: [], points: [], worker, task }, undefined)!.durationSec).toBe(5);
    expect(estimateFromSmokeRun(r, { usage: null, outputs: [], points: [], worker, task }, undefined)).toBeNull();
  });

  it('after the run: the actual duration and the ratio; the cap projects to the high end within the time limit', () => {
    const e = estimateFromSmokeRun(
      r,
      { usage: { runSeconds: 10 }, outputs: [], points: [], worker, task },
      { unit: 'epoch', bounded: 2, full: 4 },
    )!;
    expect(withActual(e, 25, 0.01)).toMatchObject({ actualSec: 25, actualCostCad: 0.01, ratio: 1.25 });
    expect(estimateRequirement(e.highSec, 3600)).toEqual({ estimateSec: 20 });
    expect(estimateRequirement(9000.2, 3600)).toEqual({ estimateSec: 3600 });
    expect(estimateRequirement(undefined, 3600)).toEqual({});
  });
});
