/**
 * `npm run corpus [-- NAME ...]`: the planner's public corpus (api/test/fixtures/corpus/, docs/corpus.md)
 * end to end on the embedded default, as a new user would run it: `npm start` (PGlite, builtin planner,
 * its local worker) in a fresh data folder, then each project submitted with its request through
 * `chatgpu submit --wait`, judged against what the corpus expects (api/test/helpers/corpus.ts).
 * Prints one line per project (honoured / asked / refused / failed, with what differs) and the totals,
 * and writes them to docs/corpus-results.md. Needs the upstream snapshots materialise.mjs reads
 * (never committed here); says so and exits 2 without them.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../bench/lib/throwawayPostgres.js';
import { corpusAvailable, judge, loadCorpus, materialise, runProject, type Verdict } from '../api/test/helpers/corpus.js';
import os from 'node:os';

const root = path.resolve(import.meta.dirname, '..');
const names = process.argv.slice(2);
const corpus = loadCorpus().filter((e) => names.length === 0 || names.includes(e.name));
if (!corpusAvailable()) {
  console.error(
    'npm run corpus needs the upstream snapshots the corpus is laid out from (CORPUS_MIRROR_DIR, default /work/.mirror); none here.',
  );
  process.exit(2);
}
const laid = materialise(corpus.map((e) => e.name));
if ('missing' in laid) {
  console.error(`The corpus could not be laid out: ${laid.missing}`);
  process.exit(2);
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'corpus-chatgpu-'));
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const env: NodeJS.ProcessEnv = { ...process.env, CHATGPU_DATA_DIR: dataDir, PORT: String(port), CHATGPU_SKIP_WEB_BUILD: '1' };
delete env.DATABASE_URL;
delete env.OPENAI_API_KEY;
console.log(`npm start in ${dataDir} on ${url} …`);
const api = spawn(process.execPath, [path.join(root, 'scripts/start.mjs')], { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: root });
let apiLog = '';
api.stdout.on('data', (b: Buffer) => (apiLog += b.toString()));
api.stderr.on('data', (b: Buffer) => (apiLog += b.toString()));
const stop = () => api.kill('SIGTERM');
process.on('exit', stop);

// Ready: the API answers and its local worker is online.
const started = Date.now();
let token = '';
for (;;) {
  if (Date.now() - started > 300_000) throw new Error(`npm start did not come up in 5 minutes:\n${apiLog.slice(-2000)}`);
  await new Promise((r) => setTimeout(r, 1000));
  try {
    token ||= (JSON.parse(readFileSync(path.join(dataDir, 'local.json'), 'utf8')) as { apiToken: string }).apiToken;
    if (!token) continue;
    const res = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: '{ workers(first: 5) { edges { node { status } } } }' }),
    });
    const body = (await res.json()) as { data?: { workers?: { edges: { node: { status: string } }[] } } };
    if (body.data?.workers?.edges.some((e) => e.node.status === 'ONLINE')) break;
  } catch {
    // not up yet
  }
}
console.log(`up in ${((Date.now() - started) / 1000).toFixed(0)} s; ${corpus.length} projects`);

const home = mkdtempSync(path.join(tmpdir(), 'corpus-home-'));
const cliEnv = { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), CHATGPU_DATA_DIR: dataDir };
const rows: { name: string; expected: string; verdict: Verdict; ok: boolean; seconds: number; problems: string[] }[] = [];
for (const entry of corpus) {
  const run = await runProject({ url, token, root: laid.root, entry, env: cliEnv, timeoutMs: 900_000 });
  const { verdict, problems } = judge(run);
  const expected = entry.expect.outcome === 'run' ? 'honoured' : entry.expect.outcome;
  rows.push({ name: entry.name, expected, verdict, ok: problems.length === 0, seconds: run.seconds, problems });
  console.log(
    `${problems.length === 0 ? 'ok  ' : 'DIFF'} ${entry.name.padEnd(32)} ${verdict.padEnd(9)} (expected ${expected}) ${run.seconds.toFixed(0)} s${problems.length ? `\n       ${problems.join('\n       ')}` : ''}`,
  );
}
stop();

const count = (v: Verdict) => rows.filter((r) => r.verdict === v).length;
const asExpected = rows.filter((r) => r.ok).length;
const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`;
const summary = `${rows.length} projects: ${count('honoured')} honoured in full, ${count('asked')} asked, ${count('refused')} refused, ${count('failed')} failed; ${asExpected} as the corpus expects.`;
console.log(`\n${summary}\nMachine: ${machine}. Command: npm run corpus`);
const md = [
  '# The planner corpus, end to end',
  '',
  `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, \`npm run corpus\` on the embedded default (npm start: PGlite, builtin planner, its local worker). Machine: ${machine}.`,
  '',
  summary,
  '',
  '| project | expected | verdict | time | what differs |',
  '|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.name} | ${r.expected} | ${r.verdict} | ${r.seconds.toFixed(0)} s | ${r.problems.join('; ').replace(/\|/g, '\\|') || '—'} |`,
  ),
  '',
].join('\n');
if (names.length === 0) writeFileSync(path.join(root, 'docs/corpus-results.md'), md);
process.exit(asExpected === rows.length ? 0 : 1);
