import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fixture } from '../../test/fixtures/fixture.js';
import { probeCapabilities } from './probeCapabilities.js';
import type { ExecFn, ExecResult } from './types.js';

const dataDir = mkdtempSync(join(tmpdir(), 'chatgpu-probe-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const ok = (stdout: string): ExecResult => ({ code: 0, stdout, stderr: '', error: null });
const exit = (code: number, stdout: string, stderr = ''): ExecResult => ({ code, stdout, stderr, error: null });
const notFound: ExecResult = { code: null, stdout: '', stderr: '', error: 'not found' };

/** A fake machine: command line (file + args, or a prefix of it) → result. Anything else is "not found". */
function machine(table: Record<string, ExecResult>): ExecFn {
  return async (file, args) => {
    const cmd = [file, ...args].join(' ');
    const key = Object.keys(table)
      .filter((k) => cmd === k || cmd.startsWith(`${k} `))
      .sort((a, b) => b.length - a.length)[0];
    return key ? table[key]! : notFound;
  };
}

function pythonOut(torch: Record<string, unknown> | null, devices: unknown[] = []): ExecResult {
  return ok(
    `CHATGPU_PROBE ${JSON.stringify({
      executable: '/fake/bin/python3',
      prefix: '/fake',
      version: '3.11.9',
      numpy: '1.26.4',
      errors: [],
      devices,
      torch: torch && { version: '2.3.1', cuda: null, hip: null, cudaAvailable: false, mpsAvailable: false, deviceCount: 0, ...torch },
    })}\n`,
  );
}

const QUERY = 'nvidia-smi --query-gpu=index,name,memory.total,driver_version,compute_cap --format=csv,noheader,nounits';
const QUERY_OLD = 'nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader,nounits';
const BWRAP_OK = { 'bwrap --version': ok('bubblewrap 0.8.0\n'), bwrap: ok('') };
/** The sandbox the CLI decided (sandbox.ts resolveSandbox); the probe advertises it as given. */
const sandbox = { sandbox: 'bwrap' as const };

describe('probeCapabilities (fake machines)', () => {
  it('an NVIDIA box with CUDA torch and nvcc', async () => {
    const exec = machine({
      [QUERY]: ok(fixture('nvidia-smi-query-noheader-nounits.csv')),
      'nvidia-smi': ok(fixture('nvidia-smi-table.txt')),
      '/fake/bin/python3': pythonOut({ cuda: '12.1', cudaAvailable: true, deviceCount: 2 }, [
        { index: 0, name: 'NVIDIA GeForce RTX 3090', capability: '8.6', memoryMiB: 24000 },
        { index: 1, name: 'NVIDIA RTX A4000', capability: '8.6', memoryMiB: 16000 },
      ]),
      'nvcc --version': ok('nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131\n'),
      ...BWRAP_OK,
    });
    const caps = await probeCapabilities({ sandbox, dataDir, exec, python: '/fake/bin/python3', platform: 'linux', cpuArch: 'x64' });
    expect(caps.accelerators).toEqual([
      {
        vendor: 'nvidia',
        index: 0,
        name: 'NVIDIA GeForce RTX 3090',
        memoryMiB: 24576,
        driver: '550.54.14',
        runtime: 'cuda 12.3',
        arch: 'sm_86',
      },
      { vendor: 'nvidia', index: 1, name: 'NVIDIA RTX A4000', memoryMiB: 16376, driver: '550.54.14', runtime: 'cuda 12.3', arch: 'sm_86' },
    ]);
    expect(caps.python).toBe('/fake/bin/python3');
    expect(caps.toolchains).toEqual({ nvcc: '12.4.131', hipcc: null });
    expect(caps.workloads).toEqual(['shell', 'python', 'torch-cpu', 'torch-cuda', 'cuda-cxx']);
    expect(caps.sandbox).toBe('bwrap');
    expect(caps.probeErrors).toContain('rocminfo: not found (no ROCm)');
    expect(caps.cpu.cores).toBeGreaterThan(0);
    expect(caps.diskFreeMiB).toBeGreaterThan(0);
  });

  it('a broken NVIDIA driver yields no GPU and says why', async () => {
    const exec = machine({ 'nvidia-smi': exit(9, fixture('nvidia-smi-driver-failed.txt')), '/fake/bin/python3': pythonOut(null) });
    const caps = await probeCapabilities({ sandbox, dataDir, exec, python: '/fake/bin/python3', platform: 'linux' });
    expect(caps.accelerators).toEqual([]);
    expect(caps.probeErrors).toContain(
      "nvidia-smi: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
    );
    expect(caps.workloads).toEqual(['shell', 'python']);
  });

  it('an old driver without compute_cap is queried again without it', async () => {
    const exec = machine({
      [QUERY]: exit(2, 'Field "compute_cap" is not a valid field to query.\n'),
      [QUERY_OLD]: ok('0, Tesla T4, 15109, 470.82.01\n'),
      'nvidia-smi': ok(fixture('nvidia-smi-table.txt')),
    });
    const caps = await probeCapabilities({ sandbox, dataDir, exec, python: '/nope/python', platform: 'linux' });
    expect(caps.accelerators).toMatchObject([{ name: 'Tesla T4', memoryMiB: 15109, driver: '470.82.01', arch: 'sm_75' }]);
    expect(caps.python).toBeNull();
    expect(caps.workloads).toEqual(['shell']);
    expect(caps.probeErrors).toContain('python /nope/python: not found');
  });

  it('garbage from the query falls back to the XML', async () => {
    const exec = machine({
      [QUERY]: ok('\u0000\u0007?!'),
      'nvidia-smi -q -x': ok(fixture('nvidia-smi-q-x.xml')),
      'nvidia-smi': ok('garbage'),
    });
    const caps = await probeCapabilities({ sandbox, dataDir, exec, python: '/nope/python', platform: 'linux' });
    expect(caps.accelerators).toMatchObject([
      { name: 'NVIDIA A30', memoryMiB: 24576, runtime: 'cuda 12.4', arch: 'sm_80' },
      { name: 'NVIDIA GeForce RTX 2080 Ti & friends', runtime: 'cuda 12.4' },
    ]);
  });

  it('a timeout is an error, not a hang or a crash', async () => {
    const exec = machine({ 'nvidia-smi': { code: null, stdout: '', stderr: '', error: 'timeout after 50 ms' } });
    const caps = await probeCapabilities({ sandbox, dataDir, exec, python: '/nope/python', platform: 'linux', timeoutMs: 50 });
    expect(caps.probeErrors).toContain('nvidia-smi: timeout after 50 ms');
  });

  it('an AMD box with ROCm torch and hipcc', async () => {
    const exec = machine({
      rocminfo: ok(fixture('rocminfo.txt')),
      'rocm-smi': ok(fixture('rocm-smi.json')),
      '/fake/bin/python3': pythonOut({ hip: '6.0.32830', cudaAvailable: true, deviceCount: 1 }, [
        { index: 0, name: 'AMD Radeon RX 6800 XT', capability: '10.3', gcnArch: 'gfx1030', memoryMiB: 16368 },
      ]),
      'hipcc --version': ok('HIP version: 6.0.32830-d62f6a171\n'),
    });
    const caps = await probeCapabilities({ sandbox, dataDir, exec, python: '/fake/bin/python3', platform: 'linux' });
    // rocminfo has one GPU, rocm-smi two: the longer list wins, rocminfo fills the arch by index
    expect(caps.accelerators).toEqual([
      { vendor: 'amd', index: 0, name: 'AMD Radeon RX 6800 XT', memoryMiB: 16368, driver: '6.3.6', runtime: 'rocm 6.0', arch: 'gfx1030' },
      { vendor: 'amd', index: 1, name: 'AMD Instinct MI210', memoryMiB: 65520, driver: '6.3.6', runtime: 'rocm 6.0', arch: 'gfx90a' },
    ]);
    expect(caps.toolchains.hipcc).toBe('6.0.32830');
    expect(caps.workloads).toEqual(['shell', 'python', 'torch-cpu', 'torch-rocm', 'hip-cxx']);
  });

  it('an older rocm-smi that rejects some flags is asked for names alone', async () => {
    const exec = machine({
      'rocm-smi --showproductname --showmeminfo': exit(2, '', 'rocm-smi: error: unrecognized arguments: --showdriverversion'),
      'rocm-smi --showproductname --json': ok(fixture('rocm-smi.json')),
    });
    const caps = await probeCapabilities({ sandbox, dataDir, exec, python: '/nope/python', platform: 'linux' });
    expect(caps.accelerators.map((a) => a.name)).toEqual(['AMD Radeon RX 6800 XT', 'AMD Instinct MI210']);
  });

  it('amd-smi is used where rocm-smi is gone', async () => {
    const exec = machine({ 'amd-smi static': ok(fixture('amd-smi-static.txt')) });
    const caps = await probeCapabilities({ sandbox, dataDir, exec, python: '/nope/python', platform: 'linux' });
    expect(caps.accelerators.map((a) => [a.name, a.arch, a.memoryMiB])).toEqual([
      ['AMD Instinct MI250X', 'gfx90a', 65536],
      ['AMD Instinct MI325X', 'gfx942', 262144],
    ]);
  });

  it('an Apple silicon Mac with MPS', async () => {
    const exec = machine({
      sysctl: ok(fixture('sysctl-m2.txt')),
      '/fake/bin/python3': pythonOut({ mpsAvailable: true, deviceCount: 1 }),
    });
    const caps = await probeCapabilities({ sandbox, dataDir, exec, python: '/fake/bin/python3', platform: 'darwin', cpuArch: 'arm64' });
    expect(caps.accelerators).toEqual([
      { vendor: 'apple', index: 0, name: 'Apple M2 Pro', memoryMiB: 32768, driver: null, runtime: 'mps', arch: 'apple-m2' },
    ]);
    expect(caps.cpu.model).toBe('Apple M2 Pro');
    expect(caps.memoryMiB).toBe(32768);
    expect(caps.workloads).toEqual(['shell', 'python', 'torch-cpu', 'torch-mps']);
  });

  it('torch sees GPUs the vendor tools missed', async () => {
    const exec = machine({
      '/fake/bin/python3': pythonOut({ cuda: '12.1', cudaAvailable: true, deviceCount: 1 }, [
        { index: 0, name: 'NVIDIA H100 80GB HBM3', capability: '9.0', memoryMiB: 81000 },
      ]),
    });
    const caps = await probeCapabilities({ sandbox, dataDir, exec, python: '/fake/bin/python3', platform: 'linux' });
    expect(caps.accelerators).toEqual([
      { vendor: 'nvidia', index: 0, name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81000, driver: null, runtime: 'cuda 12.1', arch: 'sm_90' },
    ]);
    expect(caps.workloads).toContain('torch-cuda');
  });

  it("the setup phase: modules per Python, install enabled with pip's index (credentials hidden), --no-install, --pip-index-url", async () => {
    const exec = machine({ '/opt/conda/bin/python3': ok(fixture('python-probe-install.txt')) });
    const caps = await probeCapabilities({ sandbox, dataDir, exec, python: '/opt/conda/bin/python3', platform: 'linux' });
    expect(caps.pythons[0]!.modules).toEqual(['PIL', '_yaml', 'numpy', 'pip', 'requests', 'torch', 'tqdm', 'yaml']);
    expect(caps.install).toEqual({ enabled: true, index: 'https://***@pypi.internal.example/simple' });
    expect(JSON.stringify(caps)).not.toContain('s3cret');
    const off = await probeCapabilities({ sandbox, dataDir, exec, python: '/opt/conda/bin/python3', platform: 'linux', install: false });
    expect(off.install).toEqual({ enabled: false, index: 'https://***@pypi.internal.example/simple' });
    const own = await probeCapabilities({
      sandbox,
      dataDir,
      exec,
      python: '/opt/conda/bin/python3',
      platform: 'linux',
      pipIndexUrl: 'http://10.0.0.5:8080/simple',
    });
    expect(own.install).toEqual({ enabled: true, index: 'http://10.0.0.5:8080/simple' });
    // a Python without venv (or without a usable pip), or none at all: nothing is installed
    const noVenv = machine({ '/fake/bin/python3': pythonOut(null) });
    expect((await probeCapabilities({ sandbox, dataDir, exec: noVenv, python: '/fake/bin/python3', platform: 'linux' })).install).toEqual({
      enabled: false,
      index: null,
    });
    expect((await probeCapabilities({ sandbox, dataDir, exec, python: '/nope/python', platform: 'linux' })).install).toEqual({
      enabled: false,
      index: null,
    });
  });

  it("advertises the owner's --allow-network as it is (the claim places by it), downloads by default", async () => {
    const exec = machine({});
    expect((await probeCapabilities({ sandbox, dataDir, exec, python: '/nope/python', platform: 'linux' })).allowNetwork).toBe('downloads');
    for (const allowNetwork of ['never', 'always'] as const)
      expect(
        (await probeCapabilities({ sandbox, dataDir, exec, python: '/nope/python', platform: 'linux', allowNetwork })).allowNetwork,
      ).toBe(allowNetwork);
  });

  it('never throws, even when exec itself throws', async () => {
    const exec: ExecFn = async () => {
      throw new Error('boom');
    };
    const caps = await probeCapabilities({
      sandbox,
      dataDir: join(dataDir, 'does', 'not', 'exist'),
      exec,
      python: '/x',
      platform: 'linux',
    });
    expect(caps.accelerators).toEqual([]);
    expect(caps.diskFreeMiB).toBeGreaterThan(0); // measured on the nearest existing parent
    expect(caps.probeErrors.filter((e) => e.includes('boom')).length).toBeGreaterThanOrEqual(3);
  });
});

// Debian's python3-torch (STACK.md): /usr/bin/python3 has torch while PATH's python3 may not.
const debianTorch = existsSync('/usr/lib/python3/dist-packages/torch');

describe('probeCapabilities (this machine, real tools)', () => {
  it('finds CPU, memory, disk, a Python with torch where installed, and never throws', async () => {
    const caps = await probeCapabilities({ sandbox, dataDir });
    expect(caps.cpu.cores).toBeGreaterThan(0);
    expect(caps.cpu.model.length).toBeGreaterThan(0);
    expect(caps.memoryMiB).toBeGreaterThan(0);
    expect(caps.diskFreeMiB).toBeGreaterThan(0);
    expect(caps.os).toBe(process.platform);
    expect(caps.workloads[0]).toBe('shell');
    // no duplicate interpreters (pyenv shims, python vs python3, symlinks)
    expect(new Set(caps.pythons.map((p) => p.path)).size).toBe(caps.pythons.length);
    if (debianTorch) {
      expect(caps.python).toBe('/usr/bin/python3');
      const chosen = caps.pythons.find((p) => p.path === caps.python)!;
      expect(chosen.torch?.version).toMatch(/^\d+\.\d+/);
      expect(caps.workloads).toEqual(expect.arrayContaining(['python', 'torch-cpu']));
      expect(chosen.modules).toEqual(expect.arrayContaining(['numpy', 'torch']));
      // Debian's python3-venv and python3-pip (npm test installs them)
      expect(caps.install.enabled).toBe(true);
    }
    if (caps.accelerators.length === 0) {
      expect(caps.workloads).not.toContain('torch-cuda');
      expect(caps.workloads).not.toContain('cuda-cxx');
    }
  });
});
