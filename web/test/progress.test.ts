import { describe, expect, it } from 'vitest';
import { runProgress } from '../src/features/jobs/progress';

const estimate = { durationSec: 100, costCad: 0.01, unit: 'epoch', boundedUnits: 2, fullUnits: 20 };

describe('run progress and ETA', () => {
  it("counts steps against the smoke run's last step scaled to the full run, and projects what is left from the run's own pace", () => {
    const p = runProgress({ elapsedSec: 30, step: 50, epoch: 5, smokeStep: 10, estimate });
    expect(p).toMatchObject({ basis: 'steps', step: 50, totalSteps: 100, epoch: 5, totalEpochs: 20, fraction: 0.5, remainingSec: 30 });
  });

  it('falls back to the epoch counter, then to the estimate against the time elapsed', () => {
    expect(runProgress({ elapsedSec: 10, step: null, epoch: 5, smokeStep: null, estimate })).toMatchObject({
      basis: 'epochs',
      fraction: 0.25,
      remainingSec: 30,
    });
    expect(runProgress({ elapsedSec: 40, step: null, epoch: null, smokeStep: 10, estimate })).toMatchObject({
      basis: 'time',
      fraction: 0.4,
      remainingSec: 60,
    });
    // Past the estimate: not done until it ends, and nothing negative left.
    expect(runProgress({ elapsedSec: 400, step: null, epoch: null, smokeStep: null, estimate })).toMatchObject({
      fraction: 0.99,
      remainingSec: 0,
    });
    expect(runProgress({ elapsedSec: 5, step: 3, epoch: null, smokeStep: null, estimate: null })).toMatchObject({
      fraction: null,
      remainingSec: null,
      basis: null,
    });
  });
});
