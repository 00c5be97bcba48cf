/**
 * `python -m chatgpu.torchrun` (issue 38, distributed launchers): torch.distributed.run's flags
 * passed through, `--standalone` turned into a one-node static rendezvous on 127.0.0.1 at a free
 * port, the --tee/--redirects values read on torch 1.13 + Python 3.11 (where torch's own reader
 * fails), every rank's lines prefixed `[default<rank>]:`, and a failing rank failing the launch.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const HELPERS = path.dirname(fileURLToPath(import.meta.url));
const PY = '/usr/bin/python3';
const hasTorch = existsSync(PY) && spawnSync(PY, ['-c', 'import torch.distributed.run'], { encoding: 'utf8' }).status === 0;
const env = { PATH: '/usr/bin:/bin', PYTHONPATH: HELPERS, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' };
const py = (code: string) => spawnSync(PY, ['-c', code], { encoding: 'utf8', env });

describe.skipIf(!hasTorch)('chatgpu.torchrun', () => {
  it('passes the flags through and makes --standalone a static one-node rendezvous on a free loopback port', () => {
    const r = py(
      'import json\nfrom chatgpu.torchrun import launcher_args\nprint(json.dumps(launcher_args(["--standalone", "--nproc_per_node", "2", "--tee=3", "-m", "pkg.train", "--standalone", "--lr", "0.1"])))',
    );
    expect(r.stderr).toBe('');
    const args = JSON.parse(r.stdout) as string[];
    const port = args[args.indexOf('--master_port') + 1]!;
    expect(Number(port)).toBeGreaterThan(0);
    expect(args).toEqual([
      '--nnodes',
      '1',
      '--node_rank',
      '0',
      '--rdzv_backend',
      'static',
      '--master_addr',
      '127.0.0.1',
      '--master_port',
      port,
      '--nproc_per_node',
      '2',
      '--tee=3',
      '-m',
      'pkg.train',
      '--standalone',
      '--lr',
      '0.1',
    ]);
  });

  it('reads --tee/--redirects values 0 to 3 and their per-rank mappings', () => {
    const r = py(
      'from chatgpu.torchrun import _fix_std\n_fix_std()\nfrom torch.distributed.elastic.multiprocessing.api import Std\nprint([int(Std.from_str(v)) for v in "0123"], {k: int(v) for k, v in Std.from_str("0:3,1:0").items()})',
    );
    expect(r.stdout.trim()).toBe('[0, 1, 2, 3] {0: 3, 1: 0}');
  });

  it(
    'runs 2 gloo ranks with their lines prefixed; a rank that fails fails the launch, its traceback under its prefix',
    { timeout: 120_000 },
    () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'torchrun-'));
      writeFileSync(
        path.join(dir, 'ddp.py'),
        [
          'import os, sys, torch.distributed as dist',
          'dist.init_process_group("gloo")',
          'r = dist.get_rank()',
          'print(f"hello from {r} of {dist.get_world_size()}")',
          'if r == 1 and "fail" in sys.argv: raise SystemExit("rank 1 gives up")',
          'dist.destroy_process_group()',
        ].join('\n'),
      );
      const launch = (extra: string[]) =>
        spawnSync(PY, ['-m', 'chatgpu.torchrun', '--standalone', '--nproc_per_node', '2', '--tee', '3', 'ddp.py', ...extra], {
          cwd: dir,
          encoding: 'utf8',
          env,
          timeout: 100_000,
        });
      const ok = launch([]);
      expect(ok.status, ok.stderr).toBe(0);
      expect(ok.stdout).toContain('[default0]:hello from 0 of 2');
      expect(ok.stdout).toContain('[default1]:hello from 1 of 2');
      const bad = launch(['fail']);
      expect(bad.status).not.toBe(0);
      expect(bad.stderr).toContain('[default1]:rank 1 gives up');
    },
  );
});
