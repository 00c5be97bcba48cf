/**
 * `npm start`'s PyTorch check with real interpreters: Debian's (with python3-torch, which
 * `npm test` installs), one started without site packages (no torch), and apt-get stand-ins —
 * the real one would download 800 MB — that record what they were asked to do.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureLocalPyTorch } from './localPyTorch.js';

const dir = mkdtempSync(path.join(tmpdir(), 'local-torch-'));
function script(name: string, body: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, `#!/bin/sh\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}
const bare = script('bare-python', 'exec /usr/bin/python3 -S "$@"');

describe('ensureLocalPyTorch', () => {
  it('finds a Python that has PyTorch and says nothing', async () => {
    const lines: string[] = [];
    const r = await ensureLocalPyTorch({
      install: 'auto',
      isRoot: true,
      candidates: [bare, '/usr/bin/python3'],
      log: (l) => lines.push(l),
      aptGet: '/nonexistent',
    });
    expect(r).toMatchObject({ outcome: 'present', python: '/usr/bin/python3', torch: expect.stringMatching(/^\d+\.\d+/), message: null });
    expect(lines).toEqual([]);
  });

  it('not root (or no apt, or CHATGPU_INSTALL_TORCH=never): one sentence saying what to install', async () => {
    for (const opts of [
      { install: 'auto' as const, isRoot: false },
      { install: 'never' as const, isRoot: true },
    ]) {
      const lines: string[] = [];
      const r = await ensureLocalPyTorch({ ...opts, candidates: [bare], aptGet: '/usr/bin/true', log: (l) => lines.push(l) });
      expect(r.outcome).toBe('explained');
      expect(lines).toEqual([
        expect.stringMatching(
          /^The local worker has no Python with PyTorch, so PyTorch jobs will be explained rather than run: install it \(Debian\/Ubuntu: `sudo apt-get install python3-torch python3-numpy`\)/,
        ),
      ]);
    }
  });

  it('as root with apt: updates, installs python3-torch and python3-numpy with a progress line per package, then finds it', async () => {
    const calls = path.join(dir, 'apt-calls.txt');
    const appears = path.join(dir, 'python-after-install');
    const apt = script(
      'apt-get-ok',
      `echo "$@" >> ${calls}\nif [ "$1" = install ]; then echo "Unpacking python3-torch (1.13.1)"; echo "Setting up python3-torch (1.13.1)"; ln -sf /usr/bin/python3 ${appears}; fi`,
    );
    const lines: string[] = [];
    const r = await ensureLocalPyTorch({
      install: 'auto',
      isRoot: true,
      candidates: [bare, appears],
      aptGet: apt,
      log: (l) => lines.push(l),
    });
    expect(r).toMatchObject({ outcome: 'installed', python: appears });
    expect(readFileSync(calls, 'utf8').trim().split('\n')).toEqual([
      'update -q',
      'install -y -q --no-install-recommends python3-torch python3-numpy',
    ]);
    expect(lines[0]).toMatch(/installing Debian's python3-torch and python3-numpy \(once/);
    expect(lines).toContain('  apt-get: Setting up python3-torch (1.13.1)');
    expect(lines.at(-1)).toMatch(/^Installed PyTorch \d/);
    expect(existsSync(appears)).toBe(true);
  });

  it('a failed install is said, with what to do instead', async () => {
    const apt = script('apt-get-fails', 'echo "E: Unable to locate package python3-torch" >&2; exit 100');
    const lines: string[] = [];
    const r = await ensureLocalPyTorch({ install: 'auto', isRoot: true, candidates: [bare], aptGet: apt, log: (l) => lines.push(l) });
    expect(r.outcome).toBe('failed');
    expect(lines).toContain('  apt-get: E: Unable to locate package python3-torch');
    expect(r.message).toMatch(/^Installing PyTorch failed \(apt-get exited 100\), so PyTorch jobs will be explained rather than run/);
  });
});
