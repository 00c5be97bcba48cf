/**
 * `python -m chatgpu.shard` (issue 14): what a shard keeps of a folder or a CSV in its own copy,
 * the driver that runs a script's top-level loop over a slice without changing the file, and
 * the refusals (a range past the end, a missing folder, no loop on the line) — exit 2, in words.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const HELPERS = path.dirname(fileURLToPath(import.meta.url));

function project(files: Record<string, string>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'shard-helper-'));
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    writeFileSync(path.join(dir, p), text);
  }
  const run = (args: string[]) => {
    const r = spawnSync('python3', ['-m', 'chatgpu.shard', ...args], {
      cwd: dir,
      encoding: 'utf8',
      env: { PATH: '/usr/bin:/bin', PYTHONPATH: HELPERS, PYTHONDONTWRITEBYTECODE: '1' },
    });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };
  return { dir, run };
}

describe('chatgpu.shard', () => {
  it('files: keeps the slice of the sorted paths (subfolders included) and deletes the rest of its copy', () => {
    const p = project({ 'data/b.txt': 'b', 'data/a.txt': 'a', 'data/c.txt': 'c', 'data/sub/d.txt': 'd' });
    const r = p.run(['files', 'data', '1', '3']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('chatgpu.shard: kept files 1..2 of 4 in data: b.txt, c.txt\n');
    expect(readdirSync(path.join(p.dir, 'data')).sort()).toEqual(['b.txt', 'c.txt', 'sub']);
    expect(readdirSync(path.join(p.dir, 'data/sub'))).toEqual([]);
  });
  it('rows: keeps the header and the records of the slice, each as written (a quoted newline stays in its record)', () => {
    const p = project({ 'r.csv': 'id,text\n1,"two\nlines"\n2,b\r\n3,c' });
    const r = p.run(['rows', 'r.csv', '1', '3']);
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(path.join(p.dir, 'r.csv'), 'utf8')).toBe('id,text\n2,b\r\n3,c\n');
    const q = project({ 'r.csv': 'id,text\n1,"two\nlines"\n2,b\n' });
    expect(q.run(['rows', 'r.csv', '0', '1']).code).toBe(0);
    expect(readFileSync(path.join(q.dir, 'r.csv'), 'utf8')).toBe('id,text\n1,"two\nlines"\n');
  });
  it('loop: runs the file with its top-level loop over the slice only; the file is not changed', () => {
    const script =
      'import json, sys\ndef f(c):\n    return c * 10\nout = []\nfor c in [1, 2, 3, 4]:\n    out.append(f(c))\nprint(json.dumps({"out": out, "argv": sys.argv[1:]}))\n';
    const p = project({ 's.py': script });
    const r = p.run(['loop', 's.py', '5', '1', '3', '--flag', 'x']);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out.split('\n')[1]!)).toEqual({ out: [20, 30], argv: ['--flag', 'x'] });
    expect(readFileSync(path.join(p.dir, 's.py'), 'utf8')).toBe(script);
  });
  it('refuses a range past the end, an empty range, a missing folder, a line with no loop and an unknown mode, in words', () => {
    const p = project({ 'data/a.txt': 'a', 'r.csv': 'h\n1\n', 's.py': 'x = 1\n' });
    const cases: [string[], string][] = [
      [['files', 'data', '0', '2'], 'chatgpu.shard: the range [0, 2) goes past the 1 files of data\n'],
      [['files', 'data', '1', '1'], 'chatgpu.shard: the range [1, 1) is empty or negative\n'],
      [['files', 'nope', '0', '1'], 'chatgpu.shard: nope is not a folder\n'],
      [['rows', 'r.csv', '0', 'two'], "chatgpu.shard: START and END must be integers, not '0' and 'two'\n"],
      [['loop', 's.py', '1', '0', '1'], 'chatgpu.shard: s.py has no top-level for loop on line 1\n'],
      [
        ['split', 'x'],
        'chatgpu.shard: usage: python -m chatgpu.shard files DIR START END | rows CSV START END | loop FILE LINE START END [ARGS...]\n',
      ],
    ];
    for (const [args, err] of cases) expect(p.run(args)).toMatchObject({ code: 2, err });
    expect(readdirSync(path.join(p.dir, 'data'))).toEqual(['a.txt']); // a refusal deletes nothing
  });
});
