/**
 * `python -m chatgpu.sweep`: one run of a sweep (a flag, or a literal rewritten for the run and
 * restored), its outputs and printed metrics kept apart per value, and the table of the runs.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const HELPERS = path.dirname(fileURLToPath(import.meta.url));
const ENV = { PATH: '/usr/bin:/bin', PYTHONPATH: HELPERS, PYTHONDONTWRITEBYTECODE: '1' };

function project(files: Record<string, string>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'sweep-helper-'));
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    writeFileSync(path.join(dir, p), text);
  }
  const run = (args: string[]) => {
    const r = spawnSync('/usr/bin/python3', ['-m', 'chatgpu.sweep', ...args], { cwd: dir, encoding: 'utf8', env: ENV });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };
  const read = (p: string) => readFileSync(path.join(dir, p), 'utf8');
  return { dir, run, read };
}

/** The --set spec of the first `from` on 1-based `line` (UTF-8 byte columns). */
function spec(file: string, text: string, line: number, from: string): string {
  const l = text.split('\n')[line - 1]!;
  const col = Buffer.byteLength(l.slice(0, l.indexOf(from)));
  return `${file}:${line}:${col}:${line}:${col + Buffer.byteLength(from)}:${Buffer.from(from).toString('base64url')}`;
}

const SIM = [
  'import json, os, sys',
  'label = "é"; dt = 0.1*2*2',
  'steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3',
  'os.makedirs("outputs", exist_ok=True)',
  'json.dump({"dt": dt}, open("outputs/result.json", "w"))',
  'print(f"final: error={dt*steps:.4f} steps={steps}")',
  'print(\'CHATGPU_METRIC {"values": {"energy": %s}}\' % (dt * 10))',
  '',
].join('\n');

describe('chatgpu.sweep run', () => {
  it('a literal rewritten for one run: outputs and stdout kept under NAME=VALUE, printed metrics collected, the file restored byte for byte', () => {
    const p = project({ 'sim.py': SIM, 'outputs/keep.txt': 'uploaded' });
    const r = p.run([
      'run',
      '--name',
      'dt',
      '--value',
      '0.05',
      '--set',
      spec('sim.py', SIM, 2, '0.1'),
      '--',
      '/usr/bin/python3',
      'sim.py',
      '4',
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('final: error=0.8000 steps=4');
    expect(p.read('sim.py')).toBe(SIM);
    expect(JSON.parse(p.read('outputs/sweep/dt=0.05/result.json'))).toEqual({ dt: 0.2 });
    expect(existsSync(path.join(p.dir, 'outputs/result.json'))).toBe(false);
    expect(p.read('outputs/keep.txt')).toBe('uploaded');
    expect(p.read('outputs/sweep/dt=0.05/stdout.txt')).toContain('final: error=0.8000 steps=4');
    expect(JSON.parse(p.read('outputs/sweep/dt=0.05/metrics.json'))).toEqual({
      name: 'dt',
      value: '0.05',
      exitCode: 0,
      metrics: { error: 0.8, steps: 4, energy: 2 },
    });
  });

  it('a failing command: its exit code, the file still restored, its metrics.json written', () => {
    const src = 'import sys\nrate = 3\nprint("rate", rate)\nsys.exit(rate)\n';
    const p = project({ 'f.py': src });
    const r = p.run(['run', '--name', 'rate', '--value', '5', '--set', spec('f.py', src, 2, '3'), '--', '/usr/bin/python3 f.py']);
    expect(r.code).toBe(5);
    expect(p.read('f.py')).toBe(src);
    expect(JSON.parse(p.read('outputs/sweep/rate=5/metrics.json')).exitCode).toBe(5);
  });

  it('stopped with SIGTERM: the signal goes to the program and the file is restored', async () => {
    const src = 'import time\nwait = 1\nprint("ready", flush=True)\ntime.sleep(60)\n';
    const p = project({ 'w.py': src });
    const child = spawn(
      '/usr/bin/python3',
      [
        '-m',
        'chatgpu.sweep',
        'run',
        '--name',
        'wait',
        '--value',
        '2',
        '--set',
        spec('w.py', src, 2, '1'),
        '--',
        '/usr/bin/python3',
        'w.py',
      ],
      { cwd: p.dir, env: ENV },
    );
    await new Promise<void>((resolve) => child.stdout.on('data', (b: Buffer) => b.toString().includes('ready') && resolve()));
    expect(p.read('w.py')).toContain('wait = 2');
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(code).not.toBe(0);
    expect(p.read('w.py')).toBe(src);
  });

  it('refuses, changing nothing: another text at the span, a missing file, no command, unknown options, a line break in a value', () => {
    const p = project({ 'sim.py': SIM });
    const wrong = spec('sim.py', SIM, 2, '0.1').replace(/:[^:]+$/, `:${Buffer.from('0.2').toString('base64url')}`);
    const cases = [
      ['run', '--name', 'dt', '--value', '1', '--set', wrong, '--', 'true'],
      ['run', '--name', 'dt', '--value', '1', '--set', spec('nope.py', SIM, 2, '0.1'), '--', 'true'],
      ['run', '--name', 'dt', '--value', '1', '--'],
      ['run', '--name', 'dt', '--value', '1', '--bogus', 'x', '--', 'true'],
      ['run', '--name', 'dt', '--value', '1\n2', '--', 'true'],
      ['run', '--name', 'dt', '--value', "__import__('os')", '--set', spec('sim.py', SIM, 2, '0.1'), '--', 'true'],
      ['run', '--name', 'dt', '--value', '1)', '--set', spec('sim.py', SIM, 2, '0.1'), '--', 'true'],
      ['bogus'],
    ];
    for (const c of cases) {
      const r = p.run(c);
      expect(r.code, c.join(' ')).toBe(2);
      expect(r.err).toMatch(/^chatgpu\.sweep: /);
    }
    expect(p.read('sim.py')).toBe(SIM);
    expect(existsSync(path.join(p.dir, 'outputs/sweep'))).toBe(false);
  });
});

describe('chatgpu.sweep table', () => {
  it('one row per value in numeric order, byte-equal whether the runs were in one folder or in shard folders', () => {
    const p = project({ 'sim.py': SIM });
    for (const v of ['0.2', '0.05', '0.1'])
      expect(
        p.run(['run', '--name', 'dt', '--value', v, '--set', spec('sim.py', SIM, 2, '0.1'), '--', '/usr/bin/python3', 'sim.py']).code,
      ).toBe(0);
    expect(p.run(['table', '.', 'outputs/sweep.csv']).code).toBe(0);
    const one = p.read('outputs/sweep.csv');
    expect(one).toBe('dt,energy,error,steps,exit_code\n0.05,2.0,0.6,3,0\n0.1,4.0,1.2,3,0\n0.2,8.0,2.4,3,0\n');
    // The same runs as two shards' outputs (shards/shard-i/outputs/…).
    const q = project({ 'sim.py': SIM });
    for (const [i, vals] of [
      [0, ['0.05', '0.2']],
      [1, ['0.1']],
    ] as const) {
      const shard = project({ 'sim.py': SIM });
      for (const v of vals)
        shard.run(['run', '--name', 'dt', '--value', v, '--set', spec('sim.py', SIM, 2, '0.1'), '--', '/usr/bin/python3', 'sim.py']);
      mkdirSync(path.join(q.dir, `shard-${i}`), { recursive: true });
      spawnSync('cp', ['-r', path.join(shard.dir, 'outputs'), path.join(q.dir, `shard-${i}`)], { env: ENV });
    }
    expect(readdirSync(q.dir).sort()).toEqual(['shard-0', 'shard-1', 'sim.py']);
    expect(q.run(['table', '.', 'merged/sweep.csv']).code).toBe(0);
    expect(q.read('merged/sweep.csv')).toBe(one);
  });

  it('refuses a folder with no runs and two runs of one value', () => {
    const p = project({ 'x.txt': '' });
    expect(p.run(['table', '.', 'out.csv']).code).toBe(2);
    for (const d of ['shard-0', 'shard-1']) {
      mkdirSync(path.join(p.dir, d, 'outputs/sweep/n=1'), { recursive: true });
      writeFileSync(
        path.join(p.dir, d, 'outputs/sweep/n=1/metrics.json'),
        JSON.stringify({ name: 'n', value: '1', exitCode: 0, metrics: {} }),
      );
    }
    const r = p.run(['table', '.', 'out.csv']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('two runs of n=1');
  });
});
