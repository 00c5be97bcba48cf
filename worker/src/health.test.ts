/** The worker's prerequisite check (health.ts) on this machine's real files: each failure named, and the launcher rule. */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkPrerequisites, launcherFailure, resolveExecutable } from './health.js';

const dir = mkdtempSync(path.join(tmpdir(), 'health-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const dataDir = path.join(dir, 'data');
mkdirSync(dataDir);

describe('checkPrerequisites', () => {
  it('passes with a real interpreter, no sandbox and room on the disk', () => {
    expect(checkPrerequisites({ sandbox: 'none', python: '/usr/bin/python3', dataDir, minFreeMiB: 1 })).toEqual({ ok: true });
  });

  it('a sandbox binary that is gone is a SANDBOX_ERROR, named', () => {
    const bwrap = path.join(dir, 'gone', 'bwrap');
    expect(checkPrerequisites({ sandbox: 'bwrap', bwrap, python: '/usr/bin/python3', dataDir, minFreeMiB: 1 })).toEqual({
      ok: false,
      errorClass: 'SANDBOX_ERROR',
      reason: `the sandbox binary ${bwrap} is missing or not executable (Debian/Ubuntu: apt-get install bubblewrap)`,
    });
    // Without the sandbox the binary is not needed.
    expect(checkPrerequisites({ sandbox: 'none', bwrap, python: '/usr/bin/python3', dataDir, minFreeMiB: 1 }).ok).toBe(true);
  });

  it('an interpreter removed under the worker (its link left dangling, or not executable) is a WORKER_ERROR', () => {
    const bin = path.join(dir, 'py', 'bin');
    mkdirSync(bin, { recursive: true });
    const python = path.join(bin, 'python3');
    symlinkSync('/usr/bin/python3', python);
    expect(checkPrerequisites({ sandbox: 'none', python, dataDir, minFreeMiB: 1 }).ok).toBe(true);
    rmSync(python);
    symlinkSync(path.join(dir, 'nowhere'), python);
    expect(checkPrerequisites({ sandbox: 'none', python, dataDir, minFreeMiB: 1 })).toEqual({
      ok: false,
      errorClass: 'WORKER_ERROR',
      reason: `the interpreter ${python} is missing or not executable (reinstall it, or restart the worker with --python PATH)`,
    });
    const plain = path.join(bin, 'plain');
    writeFileSync(plain, '#!/bin/sh\n');
    chmodSync(plain, 0o644);
    // root may execute nothing without an x bit either (access X_OK needs one)
    expect(checkPrerequisites({ sandbox: 'none', python: plain, dataDir, minFreeMiB: 1 }).ok).toBe(false);
  });

  it('no space for the run folder, or no data folder at all, is a WORKER_ERROR', () => {
    const full = checkPrerequisites({ sandbox: 'none', python: null, dataDir, minFreeMiB: Number.MAX_SAFE_INTEGER });
    expect(full).toMatchObject({ ok: false, errorClass: 'WORKER_ERROR' });
    expect(!full.ok && full.reason).toMatch(
      new RegExp(`^no space for the run folder: \\d+ MiB free in ${dataDir}, at least ${Number.MAX_SAFE_INTEGER} MiB needed$`),
    );
    const gone = checkPrerequisites({ sandbox: 'none', python: null, dataDir: path.join(dir, 'no-such-dir'), minFreeMiB: 1 });
    expect(gone).toEqual({
      ok: false,
      errorClass: 'WORKER_ERROR',
      reason: `the data folder ${path.join(dir, 'no-such-dir')} cannot be written (ENOENT)`,
    });
  });

  it('a real accelerator whose device nodes vanished is a WORKER_ERROR; a simulated one needs none', () => {
    const devDir = path.join(dir, 'dev');
    mkdirSync(devDir);
    const gpu = { vendor: 'nvidia' as const, index: 0, name: 'H100', memoryMiB: 81920, driver: '550', runtime: 'cuda 12.4', arch: 'sm_90' };
    expect(checkPrerequisites({ sandbox: 'none', python: null, dataDir, minFreeMiB: 1, accelerators: [gpu], devDir })).toMatchObject({
      ok: false,
      errorClass: 'WORKER_ERROR',
      reason: expect.stringMatching(/^the GPU device nodes are gone \(H100 advertised/),
    });
    expect(
      checkPrerequisites({ sandbox: 'none', python: null, dataDir, minFreeMiB: 1, accelerators: [{ ...gpu, simulated: true }], devDir }).ok,
    ).toBe(true);
    writeFileSync(path.join(devDir, 'nvidia0'), '');
    expect(checkPrerequisites({ sandbox: 'none', python: null, dataDir, minFreeMiB: 1, accelerators: [gpu], devDir }).ok).toBe(true);
  });

  it('resolves a launcher name on the PATH, a path as itself', () => {
    expect(resolveExecutable('sh', ['/nonexistent', '/usr/bin', '/bin'])).toMatch(/^\/(usr\/)?bin\/sh$/);
    expect(resolveExecutable('no-such-launcher-xyz', ['/usr/bin', '/bin'])).toBeNull();
    expect(resolveExecutable('/usr/bin/env')).toBe('/usr/bin/env');
  });
});

describe('launcherFailure', () => {
  const broken = { ok: false as const, errorClass: 'SANDBOX_ERROR' as const, reason: 'the sandbox binary bwrap is missing' };
  it("exit 126/127, or a launcher's own first words, with a failing check: the worker's failure", () => {
    expect(launcherFailure({ code: 127, stderrHead: 'prlimit: failed to execute bwrap: No such file or directory\n' }, broken)).toEqual(
      broken,
    );
    expect(launcherFailure({ code: 126, stderrHead: '' }, broken)).toEqual(broken);
    expect(launcherFailure({ code: 1, stderrHead: "bwrap: Can't find source path /tmp/py: No such file or directory\n" }, broken)).toEqual(
      broken,
    );
  });
  it("the program's own failure otherwise: a passing check, or a failure that is not the launcher's", () => {
    expect(launcherFailure({ code: 127, stderrHead: 'sh: 1: pyhton: not found\n' }, { ok: true })).toEqual({ ok: true });
    expect(launcherFailure({ code: 1, stderrHead: 'Traceback (most recent call last):\n' }, broken)).toEqual({ ok: true });
  });
});
