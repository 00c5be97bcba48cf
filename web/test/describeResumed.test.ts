/** The timeline's words for an attempt that starts from a checkpoint (the API's `attempt.resumed` event). */
import { describe, expect, it } from 'vitest';
import { describeEvent } from '../src/features/jobs/describeEvent';

describe('describeEvent: attempt.resumed', () => {
  it('says the step of how many, the checkpoint’s time and the work lost, as `chatgpu watch` does', () => {
    expect(
      describeEvent('attempt.resumed', {
        number: 2,
        fromAttempt: 1,
        step: 3,
        of: 12,
        checkpointAt: '2026-12-07T15:04:05.678Z',
        previousEndedAt: '2026-12-07T15:04:47.000Z',
        workLostSec: 41,
      }),
    ).toBe('Attempt #2 resumed at step 3 of 12 from a checkpoint of 2026-12-07 15:04:05 UTC (work lost: 41 s)');
  });

  it('leaves out what the event lacks', () => {
    expect(describeEvent('attempt.resumed', { number: 3, step: 7, of: null, checkpointAt: 'garbage', workLostSec: null })).toBe(
      'Attempt #3 resumed at step 7 from a checkpoint',
    );
    expect(describeEvent('attempt.resumed', {})).toBe('Attempt resumed from a checkpoint');
  });
});
