import { describe, expect, it } from 'vitest';
import { execCommand } from './execCommand.js';
import { canInstall, parsePythonProbe, probePython, PYTHON_PROBE_SCRIPT } from './pythonProbe.js';
import type { ExecFn } from './types.js';

const line = (o: unknown) => `CHATGPU_PROBE ${JSON.stringify(o)}`;

describe('parsePythonProbe', () => {
  it('reads the probe line even after other stdout noise', () => {
    const stdout = [
      'sitecustomize says hello',
      line({
        executable: '/opt/conda/bin/python',
        prefix: '/opt/conda',
        version: '3.11.9',
        numpy: '1.26.4',
        errors: [],
        torch: { version: '2.3.1', cuda: '12.1', hip: null, cudaAvailable: true, mpsAvailable: false, deviceCount: 1 },
        devices: [{ index: 0, name: 'NVIDIA L4', capability: '8.9', gcnArch: null, memoryMiB: 22478 }],
        modules: ['numpy', 'torch', 'not a module', 7, 'yaml'],
        install: { venv: true, pip: '24.0', ensurepip: true, index: 'https://u:t@pypi.example/simple', reason: null },
      }),
    ].join('\n');
    const p = parsePythonProbe(stdout, '/usr/bin/python3')!;
    expect(p.runtime).toEqual({
      path: '/opt/conda/bin/python',
      version: '3.11.9',
      numpy: '1.26.4',
      torch: { version: '2.3.1', cuda: '12.1', hip: null, cudaAvailable: true, mpsAvailable: false, deviceCount: 1 },
      modules: ['numpy', 'torch', 'yaml'],
    });
    expect(p.install).toEqual({ venv: true, pip: '24.0', ensurepip: true, index: 'https://u:t@pypi.example/simple', reason: null });
    expect(p.devices).toEqual([{ index: 0, name: 'NVIDIA L4', capability: '8.9', gcnArch: null, memoryMiB: 22478 }]);
  });

  it('rejects missing or malformed probe output', () => {
    expect(parsePythonProbe('', 'p')).toBeNull();
    expect(parsePythonProbe('CHATGPU_PROBE {oops', 'p')).toBeNull();
    expect(parsePythonProbe(line({ version: 3 }), 'p')).toBeNull();
    // torch present but malformed → treated as no torch, not a crash
    expect(parsePythonProbe(line({ version: '3.9.1', torch: { version: 1 } }), 'p')!.runtime.torch).toBeNull();
    // an older probe line: no modules, nothing installable
    const old = parsePythonProbe(line({ version: '3.9.1' }), 'p')!;
    expect(old.runtime.modules).toEqual([]);
    expect(canInstall(old.install)).toBe(false);
  });

  it('installing needs a virtualenv and a pip with the resolver (≥ 20.3) or ensurepip', () => {
    const i = { venv: true, pip: null, ensurepip: false, index: null, reason: null };
    expect(canInstall({ ...i, pip: '23.0.1' })).toBe(true);
    expect(canInstall({ ...i, pip: '20.3' })).toBe(true);
    expect(canInstall({ ...i, pip: '20.2.4' })).toBe(false);
    expect(canInstall({ ...i, pip: '9.0.1', ensurepip: true })).toBe(true);
    expect(canInstall({ ...i, venv: false, pip: '24.0', ensurepip: true })).toBe(false);
  });

  it('probePython reports a missing interpreter, a timeout and a crash without throwing', async () => {
    const missing = await probePython('/nonexistent/python3', execCommand, 5000);
    expect(missing).toEqual({ probe: null, error: '/nonexistent/python3: not found' });
    const hang: ExecFn = async () => ({ code: null, stdout: '', stderr: '', error: 'timeout after 10 ms' });
    expect((await probePython('/x/python', hang, 10)).error).toBe('/x/python: timeout after 10 ms');
    const crash: ExecFn = async () => ({ code: 1, stdout: '', stderr: 'Traceback…\nSyntaxError', error: null });
    expect((await probePython('/x/python', crash, 10)).error).toBe('/x/python: exit 1: Traceback…');
  });

  it('the script runs on a real interpreter without torch', async () => {
    const r = await execCommand('/usr/bin/python3', ['-S', '-c', PYTHON_PROBE_SCRIPT], { timeoutMs: 10_000 });
    const p = parsePythonProbe(r.stdout, '/usr/bin/python3');
    // -S: no site-packages, so neither numpy nor torch can be found
    expect(p?.runtime).toMatchObject({ version: expect.stringMatching(/^3\.\d+\.\d+$/), torch: null, numpy: null, modules: [] });
  });

  it("on Debian's python3: the modules its distributions provide (no standard library) and a working venv with pip", async () => {
    const r = await execCommand('/usr/bin/python3', ['-c', PYTHON_PROBE_SCRIPT], {
      timeoutMs: 60_000,
      env: { ...process.env, PIP_INDEX_URL: 'http://127.0.0.1:9/simple' },
    });
    const p = parsePythonProbe(r.stdout, '/usr/bin/python3')!;
    expect(p.runtime.modules).toEqual(expect.arrayContaining(['numpy', 'torch', 'pip']));
    expect(p.runtime.modules).toEqual([...p.runtime.modules].sort());
    expect(p.runtime.modules).not.toContain('json');
    expect(p.runtime.modules).not.toContain('os');
    expect(p.install).toMatchObject({ venv: true, pip: expect.stringMatching(/^\d+\./), index: 'http://127.0.0.1:9/simple' });
    expect(canInstall(p.install)).toBe(true);
  });
});
