/**
 * `npm start` runs the API from its bundle (scripts/apiBundle.mjs): built when missing or older
 * than a file under api/src, reused otherwise, and — when it cannot be built — the sources run
 * through tsx instead. Checked on a throwaway copy of the start scripts with a tiny api/src (the
 * real bundle is run by the tests that start scripts/start.mjs: embedded, multiprocess).
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/processes.js';

const run = promisify(execFile);
const dir = await mkdtemp(path.join(tmpdir(), 'chatgpu-bundle-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const start = () =>
  run(process.execPath, [path.join(dir, 'scripts/start.mjs')], { cwd: dir, env: { ...process.env, CHATGPU_SKIP_WEB_BUILD: '1' } });
const bundle = path.join(dir, 'api/dist/api.mjs');
/** Marks a source as edited `sec` seconds from now (mtimes, not sleeps). */
const edit = async (file: string, text: string, sec: number) => {
  await writeFile(file, text);
  const t = new Date(Date.now() + sec * 1000);
  await utimes(file, t, t);
};

describe('the API bundle of npm start', () => {
  it('is built when missing, reused while no source is newer, rebuilt after an edit, and the sources run when it cannot be built', async () => {
    await mkdir(path.join(dir, 'scripts'), { recursive: true });
    for (const f of ['start.mjs', 'apiBundle.mjs']) await cp(path.join(repoRoot, 'scripts', f), path.join(dir, 'scripts', f));
    await symlink(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    await mkdir(path.join(dir, 'api/src'), { recursive: true });
    const main = path.join(dir, 'api/src/main.ts');
    await writeFile(main, `export async function main(argv: string[]): Promise<void> { console.log('sources main', argv.length); }\n`);
    await writeFile(path.join(dir, 'api/src/bundle.ts'), `export { main } from './main.js';\nexport const built = 'one';\n`);

    expect((await start()).stdout).toContain('sources main 0'); // main from the bundle (built now)
    const first = (await stat(bundle)).mtimeMs;
    expect((await start()).stdout).toContain('sources main 0');
    expect((await stat(bundle)).mtimeMs).toBe(first); // nothing newer: not rebuilt

    await edit(main, `export async function main(): Promise<void> { console.log('edited main'); }\n`, 5);
    expect((await start()).stdout).toContain('edited main');
    expect((await stat(bundle)).mtimeMs).toBeGreaterThan(first);

    // A source esbuild refuses: npm start still runs, from the sources, and says why.
    await edit(path.join(dir, 'api/src/bundle.ts'), `export { main } from './main.js';\nexport const broken = ;\n`, 10);
    await edit(main, `export async function main(): Promise<void> { console.log('main through tsx'); }\n`, 10);
    const fallback = await start();
    expect(fallback.stdout).toContain('main through tsx');
    expect(fallback.stderr).toMatch(/The API's bundle could not be built \(Unexpected ";"\); running its sources through tsx/);
  }, 60_000);
});
