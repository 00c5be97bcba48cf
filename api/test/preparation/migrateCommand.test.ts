/** `chatgpu migrate` as a user runs it: a real process through the dispatcher. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from '../../src/preparation/pythonAst.js';

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = join(here, '..', '..', '..');
const BIN = join(ROOT, 'api', 'bin', 'chatgpu.mjs');
let out = '';
beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'chatgpu-cmd-'));
});
afterAll(async () => {
  if (out) await rm(out, { recursive: true, force: true });
});

describe('chatgpu migrate', () => {
  it('writes the migrated tree and prints a JSON report', async () => {
    const r = await runProcess(
      process.execPath,
      [BIN, 'migrate', join(here, 'corpus', 'cuda', 'reduction'), '--to', 'hip', '--out', join(out, 'red'), '--json'],
      null,
      60_000,
      process.env,
      ROOT,
    );
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.target).toBe('rocm');
    expect(report.changed).toBe(true);
    expect(report.hazards.length).toBeGreaterThan(10);
    expect(report.files).toEqual(['CMakeLists.txt', 'reduce.cuh', 'reduction.cu']);
    expect(await readFile(join(out, 'red', 'reduction.cu'), 'utf8')).toContain('hipMalloc(&d_in');
  });

  it('prints a readable report and says "no change" for code that fits', async () => {
    const r = await runProcess(
      process.execPath,
      [BIN, 'migrate', join(here, 'corpus', 'pytorch', 'cpu_only'), '--to', 'cpu', '--out', join(out, 'cpu')],
      null,
      60_000,
      process.env,
      ROOT,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('no change: the code already fits the target');
  });

  it('rejects bad usage with exit status 2', async () => {
    const r = await runProcess(process.execPath, [BIN, 'migrate', here, '--to', 'tpu'], null, 60_000, process.env, ROOT);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('usage: chatgpu migrate');
  });
});
