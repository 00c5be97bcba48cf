import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { choosePython } from './choosePython.js';
import { pythonCandidates } from './pythonCandidates.js';
import type { PythonRuntime } from './types.js';

const root = mkdtempSync(join(tmpdir(), 'chatgpu-pycand-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function exe(path: string): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, '#!/bin/sh\n');
  chmodSync(path, 0o755);
  return path;
}

describe('pythonCandidates', () => {
  it('takes PATH first, dedupes symlinks by realpath, keeps venvs, adds conda envs', () => {
    const real = exe(join(root, 'bin1', 'python3.12'));
    symlinkSync(real, join(root, 'bin1', 'python3'));
    symlinkSync(real, join(root, 'bin1', 'python')); // same interpreter: dropped
    const venv = join(root, 'venv');
    mkdirSync(join(venv, 'bin'), { recursive: true });
    writeFileSync(join(venv, 'pyvenv.cfg'), 'home = x\n');
    symlinkSync(real, join(venv, 'bin', 'python')); // a venv of it: kept
    const conda = join(root, 'conda');
    exe(join(conda, 'bin', 'python'));
    exe(join(conda, 'envs', 'torch', 'bin', 'python'));
    mkdirSync(join(root, 'bin2', 'python3'), { recursive: true }); // a directory, not a program

    const got = pythonCandidates({
      env: { PATH: `${join(root, 'bin2')}:${join(root, 'bin1')}`, VIRTUAL_ENV: venv, CONDA_PREFIX: join(conda, 'envs', 'torch') },
      platform: 'linux',
      home: join(root, 'home'),
    });
    const mine = got.filter((p) => p.startsWith(root));
    expect(mine).toEqual([
      join(root, 'bin1', 'python3'),
      join(venv, 'bin', 'python'),
      join(conda, 'envs', 'torch', 'bin', 'python'),
      join(conda, 'bin', 'python'),
    ]);
  });

  it('--python is the only candidate', () => {
    expect(pythonCandidates({ python: '/opt/x/bin/python3' })).toEqual(['/opt/x/bin/python3']);
  });
});

describe('choosePython', () => {
  const py = (path: string, torch: Partial<NonNullable<PythonRuntime['torch']>> | null): PythonRuntime => ({
    path,
    version: '3.11.0',
    numpy: null,
    modules: [],
    torch: torch && { version: '2.3.0', cuda: null, hip: null, cudaAvailable: false, mpsAvailable: false, deviceCount: 0, ...torch },
  });
  it('prefers torch with an accelerator, then torch, then plain, then the first', () => {
    expect(choosePython([py('/a', null), py('/b', {}), py('/c', { cudaAvailable: true })])).toBe('/c');
    expect(choosePython([py('/a', null), py('/b', {}), py('/c', {})])).toBe('/b');
    expect(choosePython([py('/a', null), py('/b', null)])).toBe('/a');
    expect(choosePython([py('/a', { mpsAvailable: true }), py('/b', { cudaAvailable: true })])).toBe('/a');
    expect(choosePython([])).toBeNull();
  });
});
