#!/usr/bin/env node
/**
 * Regenerates everything derived from the two schemas, or with --check verifies that
 * the committed copies are current (npm test runs the check):
 *   prisma/schema.prisma → api/src/generated/ (Prisma client + Pothos types)
 *   Pothos schema         → schema.graphql (sorted SDL)
 *   schema.graphql + documents → web/src/gql/, worker/src/gql/, api/src/cli/gql/ (typed documents)
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
// --sdl FILE: compare FILE instead of schema.graphql (lets a test prove a hand edit fails the check).
const sdlArg = process.argv.indexOf('--sdl');
const sdlFile = sdlArg > 0 ? path.resolve(process.argv[sdlArg + 1]) : path.join(root, 'schema.graphql');
// --only-sdl: skip the Prisma and codegen steps (fast check of the SDL alone).
const onlySdl = process.argv.includes('--only-sdl');
const env = {
  ...process.env,
  PATH: `${path.join(root, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}`,
  PRISMA_SCHEMA_ENGINE_BINARY: process.execPath,
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
};
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'], ...opts });
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

function listFiles(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const e of readdirSync(dir)) {
    const p = path.join(dir, e);
    if (statSync(p).isDirectory()) for (const f of listFiles(p)) out.push(path.join(e, f));
    else out.push(e);
  }
  return out.sort();
}

function sameTree(a, b) {
  const fa = listFiles(a);
  const fb = listFiles(b);
  if (fa.join('\n') !== fb.join('\n')) return false;
  return fa.every((f) => readFileSync(path.join(a, f)).equals(readFileSync(path.join(b, f))));
}

const problems = [];
// Inside the repository so that the shadow codegen.ts resolves its imports.
mkdirSync(path.join(root, 'node_modules/.cache'), { recursive: true });
const work = mkdtempSync(path.join(root, 'node_modules/.cache/chatgpu-codegen-'));
try {
  // 1. Prisma client and Pothos types.
  if (onlySdl) {
    /* skipped */
  } else if (check) {
    // Same relative layout in a shadow folder, so the generated files (which inline the
    // schema) are byte-comparable with the committed ones.
    mkdirSync(path.join(work, 'prisma'), { recursive: true });
    cpSync(path.join(root, 'prisma/schema.prisma'), path.join(work, 'prisma/schema.prisma'));
    run(bin('prisma'), ['generate', '--schema', path.join(work, 'prisma/schema.prisma')]);
    if (!sameTree(path.join(work, 'api/src/generated'), path.join(root, 'api/src/generated'))) {
      problems.push('api/src/generated/ is out of date with prisma/schema.prisma');
    }
  } else {
    run(bin('prisma'), ['generate']);
  }

  // 2. SDL.
  const sdl = run(process.execPath, ['--import', 'tsx', 'scripts/printSchema.ts']).toString();
  const sdlPath = sdlFile;
  if (check) {
    if (!existsSync(sdlPath) || readFileSync(sdlPath, 'utf8') !== sdl) problems.push('schema.graphql differs from the Pothos schema');
  } else {
    writeFileSync(sdlPath, sdl);
  }

  // 3. Typed documents (from the SDL the code produces, so a drifted SDL shows here too).
  if (onlySdl) {
    /* skipped */
  } else if (check) {
    const shadow = path.join(work, 'repo');
    for (const d of ['web/src', 'worker/src', 'api/src/cli'])
      if (existsSync(path.join(root, d))) cpSync(path.join(root, d), path.join(shadow, d), { recursive: true });
    for (const d of ['web/src/gql', 'worker/src/gql', 'api/src/cli/gql']) rmSync(path.join(shadow, d), { recursive: true, force: true });
    writeFileSync(path.join(shadow, 'schema.graphql'), sdl);
    cpSync(path.join(root, 'codegen.ts'), path.join(shadow, 'codegen.ts'));
    run(bin('graphql-codegen'), ['--config', path.join(shadow, 'codegen.ts'), '--silent'], { cwd: shadow });
    for (const d of ['web/src/gql', 'worker/src/gql', 'api/src/cli/gql']) {
      if (!sameTree(path.join(shadow, d), path.join(root, d))) problems.push(`${d}/ is out of date (run npm run codegen)`);
    }
  } else {
    run(bin('graphql-codegen'), ['--config', 'codegen.ts', '--silent']);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

if (problems.length) {
  console.error(`Generated files drifted:\n  - ${problems.join('\n  - ')}\nRun \`npm run codegen\` and commit the result.`);
  process.exit(1);
}
console.log(check ? 'schema:check ok — generated files are current.' : 'Generated: prisma client, schema.graphql, typed documents.');
