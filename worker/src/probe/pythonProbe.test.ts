import { describe, expect, it } from 'vitest';
import { execCommand } from './execCommand.js';
import { parsePythonProbe, probePython, PYTHON_PROBE_SCRIPT } from './pythonProbe.js';
import type { ExecFn } from './types.js';

const line = (o: unknown) => `CHATGPU_PROBE ${JSON.stringify(o)}`;

describe('parsePythonProbe', () => {
  it('reads the probe line even after other stdout noise', () => {
    const stdout = [
      'sitecustomize says hello',
      line({
        executable: '/opt/conda/bin/python', prefix: '/opt/conda', version: '3.11.9', numpy: '1.26.4', errors: [],
        torch: { version: '2.3.1', cuda: '12.1', hip: null, cudaAvailable: true, mpsAvailable: false, deviceCount: 1 },
        devices: [{ index: 0, name: 'NVIDIA L4', capability: '8.9', gcnArch: null, memoryMiB: 22478 }],
      }),
    ].join('\n');
    const p = parsePythonProbe(stdout, '/usr/bin/python3')!;
    expect(p.runtime).toEqual({
      path: '/opt/conda/bin/python', version: '3.11.9', numpy: '1.26.4',
      torch: { version: '2.3.1', cuda: '12.1', hip: null, cudaAvailable: true, mpsAvailable: false, deviceCount: 1 },
    });
    expect(p.devices).toEqual([{ index: 0, name: 'NVIDIA L4', capability: '8.9', gcnArch: null, memoryMiB: 22478 }]);
  });

  it('rejects missing or malformed probe output', () => {
    expect(parsePythonProbe('', 'p')).toBeNull();
    expect(parsePythonProbe('CHATGPU_PROBE {oops', 'p')).toBeNull();
    expect(parsePythonProbe(line({ version: 3 }), 'p')).toBeNull();
    // torch present but malformed → treated as no torch, not a crash
    expect(parsePythonProbe(line({ version: '3.9.1', torch: { version: 1 } }), 'p')!.runtime.torch).toBeNull();
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
    expect(p?.runtime).toMatchObject({ version: expect.stringMatching(/^3\.\d+\.\d+$/), torch: null, numpy: null });
  });
});
