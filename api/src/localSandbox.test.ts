/**
 * `npm start`'s sandbox check: the real bwrap where installed, a PATH without it (a fresh
 * machine), and apt-get stand-ins — they record what they were asked and put a bwrap on that
 * PATH the way the package would.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureLocalSandbox, sandboxPlan } from './localSandbox.js';

const dir = mkdtempSync(path.join(tmpdir(), 'local-sandbox-'));
function script(name: string, body: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, `#!/bin/sh\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}
/** A PATH with no bwrap on it: a fresh machine. */
function freshPath(): string {
  const bin = mkdtempSync(path.join(dir, 'bin-'));
  return bin;
}

describe('sandboxPlan', () => {
  it('installs only when missing, allowed, as root, with apt, on Linux; otherwise explains', () => {
    const base = { found: false, install: 'auto' as const, isRoot: true, hasApt: true, platform: 'linux' as const };
    expect(sandboxPlan(base)).toBe('install');
    expect(sandboxPlan({ ...base, found: true })).toBe('present');
    expect(sandboxPlan({ ...base, found: true, isRoot: false })).toBe('present');
    expect(sandboxPlan({ ...base, isRoot: false })).toBe('explain');
    expect(sandboxPlan({ ...base, install: 'never' })).toBe('explain');
    expect(sandboxPlan({ ...base, hasApt: false })).toBe('explain');
    expect(sandboxPlan({ ...base, platform: 'darwin' })).toBe('explain');
  });
});

describe('ensureLocalSandbox', () => {
  const bwrapInstalled = existsSync('/usr/bin/bwrap');

  it.runIf(bwrapInstalled)('finds bwrap and says nothing', async () => {
    const lines: string[] = [];
    const r = await ensureLocalSandbox({
      install: 'auto',
      isRoot: true,
      aptGet: '/nonexistent',
      log: (l) => lines.push(l),
      pathEnv: '/usr/bin:/bin',
    });
    expect(r).toMatchObject({ outcome: 'present', version: expect.stringMatching(/^bubblewrap \d/), message: null });
    expect(lines).toEqual([]);
  });

  it('not root, CHATGPU_INSTALL_SANDBOX=never or no apt: one sentence saying what to install and what runs meanwhile', async () => {
    for (const opts of [
      { install: 'auto' as const, isRoot: false, aptGet: '/usr/bin/true' },
      { install: 'never' as const, isRoot: true, aptGet: '/usr/bin/true' },
      { install: 'auto' as const, isRoot: true, aptGet: '/nonexistent/apt-get' },
    ]) {
      const lines: string[] = [];
      const r = await ensureLocalSandbox({ ...opts, pathEnv: freshPath(), log: (l) => lines.push(l) });
      expect(r.outcome).toBe('explained');
      expect(lines).toEqual([
        "The local worker has no sandbox (bubblewrap is not installed), so it runs only your own jobs, as plain processes with your user's access, and takes no other user's: install it (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf install bubblewrap`) and start again to isolate them.",
      ]);
    }
  });

  it('as root with apt: updates, installs bubblewrap with a progress line, then finds it', async () => {
    const bin = freshPath();
    const calls = path.join(dir, 'apt-calls.txt');
    const apt = script(
      'apt-get-ok',
      `echo "$@" >> ${calls}\nif [ "$1" = install ]; then echo "Unpacking bubblewrap (0.8.0-2)"; echo "Setting up bubblewrap (0.8.0-2)"; printf '#!/bin/sh\\necho "bubblewrap 0.8.0"\\n' > ${bin}/bwrap; chmod 755 ${bin}/bwrap; fi`,
    );
    const lines: string[] = [];
    const r = await ensureLocalSandbox({ install: 'auto', isRoot: true, aptGet: apt, pathEnv: bin, log: (l) => lines.push(l) });
    expect(r).toMatchObject({ outcome: 'installed', version: 'bubblewrap 0.8.0' });
    expect(readFileSync(calls, 'utf8').trim().split('\n')).toEqual(['update -q', 'install -y -q --no-install-recommends bubblewrap']);
    expect(lines).toEqual([
      "The local worker's sandbox is missing: installing Debian's bubblewrap (once, under 1 MB; CHATGPU_INSTALL_SANDBOX=never skips this)…",
      '  apt-get: Unpacking bubblewrap (0.8.0-2)',
      '  apt-get: Setting up bubblewrap (0.8.0-2)',
      'Installed bubblewrap 0.8.0: the local worker runs every task in its sandbox.',
    ]);
  });

  it('a failed install is said, with what runs meanwhile and what to do', async () => {
    const apt = script('apt-get-fails', 'echo "E: Unable to locate package bubblewrap" >&2; exit 100');
    const lines: string[] = [];
    const r = await ensureLocalSandbox({ install: 'auto', isRoot: true, aptGet: apt, pathEnv: freshPath(), log: (l) => lines.push(l) });
    expect(r.outcome).toBe('failed');
    expect(lines).toContain('  apt-get: E: Unable to locate package bubblewrap');
    expect(r.message).toMatch(
      /^Installing bubblewrap failed \(apt-get exited 100\), so the local worker runs only your own jobs, as plain processes/,
    );
  });

  it('an install that leaves no working bwrap is a failure too', async () => {
    const apt = script('apt-get-nothing', 'exit 0');
    const r = await ensureLocalSandbox({ install: 'auto', isRoot: true, aptGet: apt, pathEnv: freshPath(), log: () => {} });
    expect(r).toMatchObject({ outcome: 'failed', message: expect.stringMatching(/^Installing bubblewrap failed \(apt-get exited 0\)/) });
  });
});
