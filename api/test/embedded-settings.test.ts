/**
 * The request is the contract on the embedded default itself (`npm start`: PGlite — one connection —,
 * the builtin planner, its local worker): a constant no flag reaches is set by set-settings before the
 * run, and the job ends with the ask done. (The settings' code is made before the plan's transaction:
 * made inside it, its read of the upload waited for the transaction on PGlite's single connection.)
 */
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, repoRoot, spawnProc } from './helpers/processes.js';
import { runCli } from './helpers/cli.js';

const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !['DATABASE_URL', 'CHATGPU_DATA_DIR', 'PORT', 'TEST_DATABASE_URL', 'OPENAI_API_KEY'].includes(k) && !k.startsWith('VITEST'),
  ),
);

describe('embedded default', () => {
  it(
    'sets a module constant the request names (set-settings on PGlite) and runs it on the local worker',
    { timeout: 240_000 },
    async () => {
      const cwd = await mkdtemp(path.join(tmpdir(), 'chatgpu-embedded-settings-'));
      const port = await freePort();
      const api = spawnProc(process.execPath, [path.join(repoRoot, 'scripts/start.mjs')], {
        cwd,
        env: { ...cleanEnv, PORT: String(port), CHATGPU_SKIP_WEB_BUILD: '1', CHATGPU_INSTALL_TORCH: 'never' },
      });
      try {
        await api.waitFor(/connected to .* as worker/, 120_000);
        const project = path.join(cwd, 'sim');
        await mkdir(project);
        await writeFile(
          path.join(project, 'simulate.py'),
          'import json, os\nsteps = 1000  # how many steps to simulate\ntotal = sum(range(steps))\nos.makedirs("outputs", exist_ok=True)\njson.dump({"steps": steps, "total": total}, open("outputs/result.json", "w"))\nprint(f"steps={steps} total={total}")\n',
        );
        const home = await mkdtemp(path.join(tmpdir(), 'cli-home-'));
        const out = path.join(cwd, 'out');
        const r = await runCli(
          ['submit', project, '-m', 'simulate 12 steps', '--wait', '--out', out, '--server', `http://127.0.0.1:${port}`],
          {
            env: { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), CHATGPU_DATA_DIR: path.join(cwd, '.chatgpu') },
            input: '',
            timeoutMs: 200_000,
          },
        );
        expect(r.code, `${r.stdout}\n${r.stderr}\n${api.output().slice(-3000)}`).toBe(0);
        const { readFile } = await import('node:fs/promises');
        expect(JSON.parse(await readFile(path.join(out, 'outputs/result.json'), 'utf8'))).toEqual({ steps: 12, total: 66 });
        const job = JSON.parse(await readFile(path.join(out, 'job.json'), 'utf8')) as {
          status: string;
          plan: { settings: { name: string; from: string; to: string }[] };
          asks: { ask: string; outcome: string }[];
        };
        expect(job.status).toBe('SUCCEEDED');
        expect(job.plan.settings.map((e) => [e.name, e.from, e.to])).toEqual([['steps', '1000', '12']]);
        expect(job.asks.find((a) => a.ask === '12 steps')?.outcome).toBe('done');
      } finally {
        await api.stop();
      }
    },
  );
});
