import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { compareMerged, csvRecords, jsonDiff, mergeOutputs, type OutFile } from './shardMerge.js';

const blobs = new Map<string, Buffer>();
const file = (path: string, text: string): OutFile => {
  const bytes = Buffer.from(text);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  blobs.set(sha256, bytes);
  return { path, sha256, size: bytes.length };
};
const read = async (sha: string) => blobs.get(sha) ?? Promise.reject(new Error(`no blob ${sha}`));

describe('merging outputs by kind', () => {
  it('rows: one header, the rows in shard order, a quoted newline kept in its row; a different header is refused', async () => {
    const merge = { kind: 'rows' as const, file: 'outputs/r.csv', fields: [] };
    const m = await mergeOutputs(merge, [[file('outputs/r.csv', 'a,b\n1,"x\ny"\n')], [file('outputs/r.csv', 'a,b\r\n2,z')]], read);
    expect(m.files[0]!.bytes!.toString()).toBe('a,b\n1,"x\ny"\n2,z\n');
    expect(m.value).toEqual({ rows: 2, perShard: [1, 1] });
    await expect(mergeOutputs(merge, [[file('outputs/r.csv', 'a,b\n1,2\n')], [file('outputs/r.csv', 'a,c\n1,2\n')]], read)).rejects.toThrow(
      'shard 2\'s outputs/r.csv has the header "a,c", not "a,b"',
    );
    await expect(mergeOutputs(merge, [[file('outputs/r.csv', 'a\n')], []], read)).rejects.toThrow('shard 2 wrote no outputs/r.csv');
    expect(csvRecords('1,"a\nb"\n2,c\n\n3,d')).toBe(3);
  });
  it('files: the union under the folder; the same path with other bytes from two shards is refused', async () => {
    const merge = { kind: 'files' as const, file: 'outputs/', fields: [] };
    const m = await mergeOutputs(
      merge,
      [
        [file('outputs/b.txt', 'B'), file('log.txt', 'x')],
        [file('outputs/a.txt', 'A'), file('outputs/b.txt', 'B')],
      ],
      read,
    );
    expect(m.files.map((f) => f.path)).toEqual(['outputs/a.txt', 'outputs/b.txt']);
    await expect(mergeOutputs(merge, [[file('outputs/a.txt', 'A')], [file('outputs/a.txt', 'a')]], read)).rejects.toThrow(
      'shard 1 and shard 2 both wrote outputs/a.txt, with different contents',
    );
  });
  it('list: concatenated in order; a shard whose file is not a list is named', async () => {
    const merge = { kind: 'list' as const, file: 'outputs/l.json', fields: [] };
    expect((await mergeOutputs(merge, [[file('outputs/l.json', '[1,2]')], [file('outputs/l.json', '[3]')]], read)).value).toEqual([
      1, 2, 3,
    ]);
    await expect(mergeOutputs(merge, [[file('outputs/l.json', '[1]')], [file('outputs/l.json', '{"a":1}')]], read)).rejects.toThrow(
      "shard 2's outputs/l.json is not a JSON list",
    );
    await expect(mergeOutputs({ ...merge, kind: 'script' }, [], read)).rejects.toThrow('a merge script runs on a worker');
  });
  it('compares with the unsharded run in words: missing, extra and different files; rows; a script result within rtol', async () => {
    const files = { kind: 'files' as const, file: 'outputs/', fields: [] };
    const c = await compareMerged(
      { merge: files },
      [file('outputs/a', '1'), file('outputs/c', '3'), file('outputs/d', 'x')],
      [file('outputs/a', '1'), file('outputs/b', '2'), file('outputs/d', 'y')],
      read,
    );
    expect(c.ok).toBe(false);
    expect(c.report).toBe(
      'The merged result disagrees with the unsharded run: missing from the merge: outputs/b; not written by the unsharded run: outputs/c; different bytes: outputs/d.',
    );
    expect((await compareMerged({ merge: files }, [], [], read)).report).toContain('the unsharded run wrote no file under outputs/');
    const rows = { kind: 'rows' as const, file: 'outputs/r.csv', fields: [] };
    const r = await compareMerged({ merge: rows }, [file('outputs/r.csv', 'a\n1\n2\n')], [file('outputs/r.csv', 'a\n1\n3\n')], read);
    expect(r.report).toBe(
      'The merged result disagrees with the unsharded run: outputs/r.csv: merged 2 rows ≠ unsharded 2 rows; line 3 differs ("2" vs "3").',
    );
    const script = {
      kind: 'script' as const,
      file: 'outputs/s.json',
      fields: [],
      script: { path: 'merge.py', command: 'python merge.py' },
      rtol: 1e-6,
    };
    expect(
      (await compareMerged({ merge: script }, [file('outputs/s.json', '{"x": 1.0000001}')], [file('outputs/s.json', '{"x":1}')], read)).ok,
    ).toBe(true);
    expect(jsonDiff({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] }, 0)).toBe('a[1].b: 2 ≠ 3');
    expect(jsonDiff({ a: 1 }, { b: 1 }, 0)).toBe('the object: keys a ≠ b');
    await expect(compareMerged({ merge: { ...script, file: 'outputs/s.txt' } }, [], [file('outputs/s.txt', 'x')], read)).rejects.toThrow(
      'the merge script wrote no outputs/s.txt',
    );
  });
});
