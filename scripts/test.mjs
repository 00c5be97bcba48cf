#!/usr/bin/env node
/**
 * `npm test`: make sure what the tests need is here (idempotent, quick when it is),
 * then check generated files and types, and run every suite.
 *   - PostgreSQL at 127.0.0.1:5432 (started with pg_ctlcluster when installed but down)
 *   - Debian packages: chromium (browser tests), bubblewrap (sandbox), python3-torch and
 *     python3-numpy, python3-matplotlib, python3-sklearn, python3-yaml (workloads and the planner's corpus), python3-flask (hosted services), python3-venv + python3-pip (setup phase),
 *     python3-nbclient + python3-nbformat + python3-ipykernel (notebooks: chatgpu.notebook), hipcc + libhiprand-dev + librocrand-dev (HIP compile checks), zip,
 *     postgresql-client
 * Extra arguments go to vitest (e.g. `npm test -- api/test/auth.test.ts`).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const APT = [
  'chromium',
  'bubblewrap',
  'python3-torch',
  'python3-numpy',
  'python3-click',
  'python3-typer',
  'python3-flask',
  'python3-matplotlib',
  'python3-sklearn',
  'python3-yaml',
  'python3-venv',
  'python3-pip',
  'python3-nbclient',
  'python3-nbformat',
  'python3-ipykernel',
  'hipcc',
  'libhiprand-dev',
  'librocrand-dev',
  'zip',
  'postgresql-client',
];
const isRoot = process.getuid?.() === 0;

function fail(sentence) {
  console.error(`npm test cannot run: ${sentence}`);
  process.exit(1);
}

function installed(pkg) {
  return spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' }).stdout?.includes('install ok installed');
}

function aptInstall(pkgs) {
  if (!isRoot || !existsSync('/usr/bin/apt-get')) {
    fail(`install these Debian packages first: sudo apt-get install -y ${pkgs.join(' ')}`);
  }
  console.log(`Installing ${pkgs.join(', ')} (once; this can take a few minutes)…`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-q'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...pkgs], { stdio: 'inherit', env });
}

function portOpen(port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => (s.end(), resolve(true)));
    s.on('error', () => resolve(false));
    s.setTimeout(1000, () => (s.destroy(), resolve(false)));
  });
}

async function ensurePostgres() {
  if (process.env.TEST_DATABASE_URL || (await portOpen(5432))) return;
  if (!existsSync('/usr/bin/pg_ctlcluster') && !existsSync('/usr/lib/postgresql')) aptInstall(['postgresql']);
  const versions = existsSync('/etc/postgresql') ? readdirSync('/etc/postgresql') : [];
  if (versions.length === 0) fail('PostgreSQL is installed but has no cluster; create one with `pg_createcluster 15 main`.');
  console.log(`Starting PostgreSQL ${versions[0]}…`);
  spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', versions[0], 'main', 'start'], { stdio: 'inherit' });
  for (let i = 0; i < 30 && !(await portOpen(5432)); i++) await new Promise((r) => setTimeout(r, 500));
  if (!(await portOpen(5432))) fail('PostgreSQL did not start on 127.0.0.1:5432 (see /var/log/postgresql).');
  // Tests connect as postgres over TCP without a password (trust on loopback, as on CI machines).
}

const missing = APT.filter((p) => !installed(p));
if (missing.length) aptInstall(missing);
await ensurePostgres();

const node = process.execPath;
/** Runs a check with its output kept; resolves to its exit code and what it printed. */
function check(label, args) {
  return new Promise((resolve) => {
    const child = spawn(node, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ label, code: code ?? 1, out }));
  });
}
// The generated files' check, the formatter's check (Prettier, print width 140), the linter (ESLint: the layers' import boundaries and a few
// bug rules, eslint.config.js; any warning fails it) and TypeScript strict everywhere (api with scripts/ and bench/, worker, web), side by side:
// each is one process, and they are independent.
const checks = await Promise.all([
  check('Generated files are out of date (npm run codegen).', [path.join(root, 'scripts/codegen.mjs'), '--check']),
  check('Code is not formatted (npm run format).', [
    path.join(root, 'node_modules/prettier/bin/prettier.cjs'),
    '--check',
    '--log-level=warn',
    '**/*.{ts,tsx,js,mjs,cjs,css}',
  ]),
  check('Lint errors (npm run lint).', [path.join(root, 'node_modules/eslint/bin/eslint.js'), '--max-warnings=0', '.']),
  ...['api', 'worker', 'web'].map((project) =>
    check(`Type errors in ${project}/ (npm run typecheck).`, [
      path.join(root, 'node_modules/typescript/bin/tsc'),
      '-p',
      project,
      '--noEmit',
    ]),
  ),
]);
for (const c of checks) if (c.out.trim()) process.stdout.write(c.out.endsWith('\n') ? c.out : `${c.out}\n`);
const failed = checks.find((c) => c.code !== 0);
if (failed) {
  console.error(failed.label);
  process.exit(failed.code);
}

const report = path.join(root, 'node_modules/.cache/vitest-report.json');
rmSync(report, { force: true });
const r = spawnSync(
  node,
  [
    path.join(root, 'node_modules/vitest/vitest.mjs'),
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
    ...process.argv.slice(2),
  ],
  { cwd: root, stdio: 'inherit', env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' } },
);
if (existsSync(report)) {
  const j = JSON.parse(readFileSync(report, 'utf8'));
  const skipped = (j.numPendingTests ?? 0) + (j.numTodoTests ?? 0);
  console.log(`\n${j.numPassedTests} passed, ${j.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}`);
}
process.exit(r.status ?? 1);
