import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/processes.js';

const run = promisify(execFile);
const check = (...args: string[]) => run(process.execPath, ['scripts/codegen.mjs', '--check', ...args], { cwd: repoRoot });

describe('npm run schema:check', () => {
  it('passes on the committed schema.graphql, Prisma client and typed documents', async () => {
    const { stdout } = await check();
    expect(stdout).toMatch(/generated files are current/);
  });

  it('fails when the SDL is hand-edited', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'sdl-'));
    const edited = path.join(dir, 'schema.graphql');
    const sdl = await readFile(path.join(repoRoot, 'schema.graphql'), 'utf8');
    await writeFile(edited, sdl.replace('type Job implements Node {', 'type Job implements Node {\n  handEdited: String'));
    await expect(check('--only-sdl', '--sdl', edited)).rejects.toMatchObject({ stderr: expect.stringMatching(/schema.graphql differs/) });
    await writeFile(edited, sdl);
    await expect(check('--only-sdl', '--sdl', edited)).resolves.toBeTruthy();
  });
});
