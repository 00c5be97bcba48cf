import { describe, expect, it } from 'vitest';
import { THREAD_VARS, threadEnv } from './threadEnv.js';

describe('threadEnv', () => {
  it('leaves a one-slot worker’s tasks alone (the whole machine, as a direct run)', () => {
    expect(threadEnv(16, 1)).toEqual({});
  });

  it('gives each of several slots its share of the cores, in every library’s variable', () => {
    const env = threadEnv(16, 4);
    expect(Object.keys(env).sort()).toEqual([...THREAD_VARS].sort());
    expect(new Set(Object.values(env))).toEqual(new Set(['4']));
    expect(threadEnv(7, 2).OMP_NUM_THREADS).toBe('3');
  });

  it('never goes below one thread, and ignores a machine it knows nothing about', () => {
    expect(threadEnv(2, 8).OMP_NUM_THREADS).toBe('1');
    expect(threadEnv(0, 4)).toEqual({});
    expect(threadEnv(Number.NaN, 4)).toEqual({});
  });

  it('keeps what the task’s own environment sets', () => {
    const env = threadEnv(8, 2, { OMP_NUM_THREADS: '8' });
    expect(env.OMP_NUM_THREADS).toBeUndefined();
    expect(env.MKL_NUM_THREADS).toBe('4');
  });
});
