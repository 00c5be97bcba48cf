import { describe, expect, it } from 'vitest';
import { validationBadge } from './validationBadge.js';

describe('validationBadge: one vocabulary for outputs, timeline and API', () => {
  const ok = { status: 'SUCCEEDED', statusReason: null };
  it('says validated, validated by replication or unverified (with why) for a succeeded job', () => {
    expect(validationBadge(ok, [])).toEqual({ badge: 'validated', label: 'validated', reason: 'It passed its acceptance checks.' });
    expect(validationBadge(ok, [{ status: 'SKIPPED', report: 'Not sampled: 10%…' }]).badge).toBe('validated');
    expect(validationBadge(ok, [{ status: 'MATCHED', report: "Replicated on b: matched a's result." }])).toEqual({
      badge: 'validated-by-replication',
      label: 'validated by replication',
      reason: "Replicated on b: matched a's result.",
    });
    // Unverified wins over a match elsewhere: one result nobody checked is enough to say so.
    const why = 'Sampled (…), but no worker of another owner is online to replicate on: accepted unverified.';
    expect(
      validationBadge(ok, [
        { status: 'MATCHED', report: 'm' },
        { status: 'UNCHECKED', report: why },
      ]),
    ).toEqual({ badge: 'unverified', label: 'unverified', reason: why });
  });

  it('says checks pending before the end, not validated (with the reason) after a failure', () => {
    expect(validationBadge({ status: 'RUNNING', statusReason: null }, [{ status: 'MATCHED', report: 'm' }])).toEqual({
      badge: 'pending',
      label: 'checks pending',
      reason: null,
    });
    expect(validationBadge({ status: 'FAILED', statusReason: 'loss 0.9 is above 0.5' }, [])).toEqual({
      badge: 'not-validated',
      label: 'not validated',
      reason: 'loss 0.9 is above 0.5',
    });
  });
});
