import { describe, expect, it } from 'vitest';
import type { Item } from '../../models/types.js';
import { conversation, entry } from '../../../../test/helpers/plannerConversation.js';
import { planningOf, READ_ALL_CHARS } from './planning.js';

const callOf = (r: ReturnType<typeof planningOf>) => (Array.isArray(r) ? (r[0] as Extract<Item, { type: 'function_call' }>) : null);

describe('planningOf', () => {
  it('asks for the files, the project’s facts and the network’s capacity first, in that order', () => {
    const task: Item = { type: 'message', role: 'user', content: 'Request: run it' };
    expect(callOf(planningOf([task]))?.name).toBe('list_files');
    const full = conversation({ request: 'run it', facts: { entryPoints: [entry('a.py')] } });
    expect(callOf(planningOf(full.slice(0, 3)))?.name).toBe('find_dependencies');
    expect(callOf(planningOf(full.slice(0, 5)))?.name).toBe('network_capacity');
    expect(Array.isArray(planningOf(full))).toBe(false);
  });

  it('reads the request, the preference and the answers; a file page by page, each page once, up to the limit', () => {
    const history = conversation({ request: 'train it', preference: 'nvidia', answers: ['Which script should run?: a.py'] });
    const page = (offset: number, nextOffset: number | null) => ({
      type: 'function_call_output' as const,
      call_id: `r${offset}`,
      output: JSON.stringify({ path: 'big.py', offset, content: 'x'.repeat(10), nextOffset }),
    });
    const read = (offset: number) => ({ type: 'function_call' as const, call_id: `r${offset}`, name: 'read_file', arguments: '{}' });
    const p = planningOf([...history, read(0), page(0, 10)]);
    if (Array.isArray(p)) throw new Error('facts missing');
    expect([p.request, p.preference, p.answerTo('Which script')]).toEqual(['train it', 'nvidia', 'Which script should run?: a.py']);
    expect(p.readCall('big.py')).toEqual({ path: 'big.py', offset: 10 });
    expect(p.readCall('other.py')).toEqual({ path: 'other.py' });
    const q = planningOf([...history, read(0), page(0, 10), read(10), page(10, READ_ALL_CHARS)]);
    if (Array.isArray(q)) throw new Error('facts missing');
    expect(q.readCall('big.py')).toBeNull();
    expect(q.readOf('big.py')).toBe('x'.repeat(20));
  });
});
