/**
 * `chatgpu watch` and `chatgpu answer` as a user runs them: a real API with the builtin
 * planner and the scheduler, a real worker process, and the real CLI as a child process.
 * Jobs are submitted with `chatgpu submit` (no --wait) and re-attached to afterwards.
 * Two entry points with `__main__` blocks make the planner ask "Which script should run?"
 * (choices main.py, train.py); a project with no Python at all fails in planning.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi, type TestApi } from './helpers/api.js';
import { runCli, startCli } from './helpers/cli.js';
import { waitFor } from './helpers/waitFor.js';
import { startWorker } from './helpers/worker.js';

const api: TestApi = await startTestApi({ TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1' }, { scheduler: true, model: createBuiltinClient() });
const user = await api.signUp();
const wt = await api.gql(`mutation { createWorkerToken(input: {name: "w"}) { ... on CreatedWorkerToken { token } } }`, {}, user.token);
await startWorker(api.url, wt.data.createWorkerToken.token, 'watch-box');

const tmp = await mkdtemp(path.join(tmpdir(), 'chatgpu-watch-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));

/** A token in the environment and nothing else to fall back on. */
const withToken = (token = user.token) => ({
  HOME: path.join(tmp, 'home'),
  XDG_CONFIG_HOME: path.join(tmp, 'home/.config'),
  CHATGPU_DATA_DIR: path.join(tmp, 'no-data'),
  CHATGPU_TOKEN: token,
});
const srv = ['--server', api.url];
const cli = (args: string[], opts: { input?: string; token?: string } = {}) =>
  runCli([...args, ...srv], { env: withToken(opts.token), input: opts.input });

const TWO_ENTRY_POINTS = {
  'main.py': 'if __name__ == "__main__":\n    print("main ran")\n',
  'train.py':
    'import os\nif __name__ == "__main__":\n    os.makedirs("outputs", exist_ok=True)\n    open("outputs/done.txt", "w").write("trained")\n    print("trained")\n',
};

let projects = 0;
/** Writes the files into a fresh folder and submits it with `chatgpu submit --json`; returns the job's id. */
async function submit(files: Record<string, string>, request = 'run the project'): Promise<string> {
  const dir = path.join(tmp, `project-${++projects}`);
  for (const [p, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, p)), { recursive: true });
    await writeFile(path.join(dir, p), content);
  }
  const r = await cli(['submit', dir, '-m', request, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout).id as string;
}

async function jobState(id: string) {
  const r = await api.gql(
    `query($id: ID!) { job(id: $id) { status statusReason openQuestions { id text choices } questions { text status answer } } }`,
    { id },
    user.token,
  );
  return r.data.job as {
    status: string;
    statusReason: string | null;
    openQuestions: { id: string; text: string; choices: string[] }[];
    questions: { text: string; status: string; answer: string | null }[];
  };
}

async function waitingForAnswer(id: string) {
  return waitFor(
    async () => {
      const j = await jobState(id);
      if (['FAILED', 'CANCELLED', 'SUCCEEDED'].includes(j.status)) throw new Error(`the job ended ${j.status}: ${j.statusReason}`);
      return j.status === 'NEEDS_INPUT' && j.openQuestions.length ? j : null;
    },
    60_000,
    `job ${id} to ask its question`,
  );
}

/** One line on stderr, nothing on stdout. */
function oneLineError(r: { stdout: string; stderr: string }) {
  expect(r.stdout).toBe('');
  expect(r.stderr.split('\n')).toHaveLength(2);
  return r.stderr;
}

describe('chatgpu watch', () => {
  it('re-attaches, answers the question from piped stdin, follows the run on a worker to SUCCEEDED and downloads the outputs', async () => {
    const id = await submit(TWO_ENTRY_POINTS);
    const out = path.join(tmp, 'watch-out');
    // Like `echo 2 | chatgpu watch JOB`: the line waits in the pipe until the question is asked.
    const r = await cli(['watch', id, '--out', out], { input: '2\n' });
    if (process.env.CLI_TEST_PRINT) console.log(r.stdout, r.stderr);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const text = r.stdout;
    expect(text).toContain(`Job ${id} (project-${projects}): ${api.url}/jobs/${encodeURIComponent(id)}`);
    expect(text).toContain('  ▸ job created with 2 files');
    expect(text).toMatch(/\? Which script should run\?[^\n]*\n {4}1\) main\.py\n {4}2\) train\.py\n/);
    expect(r.stderr).toContain('> 2');
    expect(text).toContain('✓ answered: train.py');
    expect(text).toMatch(/◇ Plan v1 by builtin: [^\n]*\n\s+command:\s+python train\.py\n/);
    expect(text).toMatch(/── run \(RUN\) · attempt 1 on watch-box ──\n(?: {2}\| \[system\][^\n]*\n)* {2}\| trained\n/);
    expect(text).toContain('● SUCCEEDED');
    expect(text).toMatch(/Job SUCCEEDED/);
    expect(await readFile(path.join(out, 'outputs/done.txt'), 'utf8')).toBe('trained');
    const summary = JSON.parse(await readFile(path.join(out, 'job.json'), 'utf8'));
    expect(summary).toMatchObject({
      id,
      status: 'SUCCEEDED',
      plan: { command: 'python train.py' },
      validated: true,
      trust: { badge: 'unverified', reason: expect.stringMatching(/\S/) },
    }); // one worker: the sampled replica had nowhere to run
    expect(r.stdout + r.stderr).toMatch(/Saved 1 output file \([^)]*\) and job\.json in /); // no preparation: no evidence bundle named
    expect(summary.outputs.map((o: { path: string }) => o.path)).toContain('outputs/done.txt');
    expect((await jobState(id)).questions).toEqual([
      { text: expect.stringMatching(/^Which script should run\?/), status: 'ANSWERED', answer: 'train.py' },
    ]);
  });

  it('with no terminal and no answer on stdin it exits 3 saying how to answer; `answer --choice` answers it and a second watch goes on to the end', async () => {
    const id = await submit(TWO_ENTRY_POINTS);
    const w = startCli(['watch', id, ...srv], { env: withToken() });
    w.endInput();
    expect(await w.exited, w.output()).toBe(3);
    const esc = id.replace(/[+=/]/g, '\\$&');
    expect(w.stderr()).toMatch(
      new RegExp(
        `^> \\nchatgpu: The job waits for an answer to “Which script should run\\?[^”]*” and stdin has no more lines: answer it with: chatgpu answer ${esc} --choice N \\(or in the dashboard at \\S+\\), then follow it again with: chatgpu watch ${esc}\\n$`,
      ),
    );
    expect(w.stdout()).toMatch(/\? Which script should run\?[^\n]*\n {4}1\) main\.py\n {4}2\) train\.py\n/);
    expect((await jobState(id)).status).toBe('NEEDS_INPUT'); // the job still waits

    const a = await cli(['answer', id, '--choice', '1']);
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(/^Answered “Which script should run\?[^\n]*”: main\.py\nFollow the job with: chatgpu watch \S+\n$/);

    const again = await cli(['watch', id]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toMatch(/command:\s+python main\.py\n/);
    expect(again.stdout).toContain('  | main ran');
    expect(again.stdout).toContain('Job SUCCEEDED');
  });

  it('`submit --wait` with no terminal and nothing on stdin is the same error exit, not a silent wait', async () => {
    const dir = path.join(tmp, `project-${++projects}`);
    await mkdir(dir, { recursive: true });
    for (const [p, content] of Object.entries(TWO_ENTRY_POINTS)) await writeFile(path.join(dir, p), content);
    const r = await cli(['submit', dir, '-m', 'run the project', '--wait']);
    expect(r.code, r.stdout + r.stderr).toBe(3);
    expect(r.stderr).toMatch(
      /\nchatgpu: The job waits for an answer to “Which script should run\?[^”]*” and stdin has no more lines: answer it with: chatgpu answer \S+ --choice N \(or in the dashboard at \S+\), then follow it again with: chatgpu watch \S+\n$/,
    );
    const id = /Job (\S+) submitted/.exec(r.stdout)![1]!;
    expect((await jobState(id)).status).toBe('NEEDS_INPUT');
    await cli(['cancel', id]);
  });

  it('an answer on stdin that names none of the choices is refused and the next line is read', async () => {
    const id = await submit(TWO_ENTRY_POINTS);
    const r = await cli(['watch', id], { input: '%%% garbage\ntrain\n' });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(
      '  ✗ “%%% garbage” names none of the choices. Answer with one of them, by its number or its words: 1) main.py; 2) train.py. (2 more answers that name none and the job stops.)\n',
    );
    expect(r.stdout).toContain('  ✓ answered: train.py\n');
    expect(r.stdout).not.toContain('answer refused'); // said once, at the prompt
    expect(r.stdout).toContain('Job SUCCEEDED');
    expect((await jobState(id)).questions).toEqual([
      { text: expect.stringMatching(/^Which script should run\?/), status: 'ANSWERED', answer: 'train.py' },
    ]);
  });

  it('three answers that name none stop the job with the question and the answers: exit 1', async () => {
    const id = await submit(TWO_ENTRY_POINTS);
    const r = await cli(['watch', id], { input: 'yes\nzzz\n%%% garbage\ntrain.py\n' });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const { status, statusReason, questions } = await jobState(id);
    expect(status).toBe('FAILED');
    expect(statusReason).toMatch(
      /^Stopped: 3 answers did not name one of the choices of the question “Which script should run\?[^”]*” \(1\) main\.py; 2\) train\.py\); the answers were “yes”, “zzz”, “%%% garbage”\./,
    );
    expect(questions).toEqual([{ text: expect.stringMatching(/^Which script should run\?/), status: 'CANCELLED', answer: null }]);
    expect(r.stdout.match(/ {2}✗ /g)).toHaveLength(3);
    expect(r.stdout).not.toContain('✓ answered');
    expect(r.stdout).toContain(`Job FAILED: ${statusReason}`);
  });

  it('follows a job that fails in planning to its end: exit 1, the reason, job.json with --out and the summary with --json', async () => {
    const id = await submit({ 'data.csv': 'x,y\n1,2\n', 'NOTES.txt': 'nothing to run here\n' });
    await waitFor(async () => (await jobState(id)).status === 'FAILED', 60_000, 'the job to fail');
    const out = path.join(tmp, 'failed-out');
    const r = await cli(['watch', id, '--out', out, '--json']);
    expect(r.code, r.stderr).toBe(1);
    const { statusReason } = await jobState(id);
    expect(statusReason).toBeTruthy();
    expect(r.stderr).toContain(`● FAILED — ${statusReason}`);
    expect(r.stderr).toContain(`Job FAILED: ${statusReason}`);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ id, status: 'FAILED', statusReason, validated: false, outDir: out });
    expect(JSON.parse(await readFile(path.join(out, 'job.json'), 'utf8'))).toMatchObject({
      id,
      status: 'FAILED',
      statusReason,
      trust: { badge: 'not-validated', reason: statusReason },
    });
  });

  it('refuses what it cannot follow: one line and a non-zero exit', async () => {
    const id = await submit({ 'x.py': 'print(1)\n' });
    const other = await api.signUp();
    const notYours = await cli(['watch', id], { token: other.token });
    expect(notYours.code).toBe(1);
    expect(oneLineError(notYours)).toBe(`chatgpu: No job ${id} (or it is not yours).\n`);

    const uuid = randomUUID();
    const missing = await cli(['watch', uuid]);
    expect(missing.code).toBe(1);
    expect(oneLineError(missing)).toBe(`chatgpu: No job ${uuid} (or it is not yours).\n`);

    const bad = await cli(['watch', 'not-a-job']);
    expect(bad.code).toBe(2);
    expect(oneLineError(bad)).toBe(`chatgpu: "not-a-job" is not a job id (chatgpu jobs lists your jobs' ids); see chatgpu watch --help.\n`);

    const taskId = Buffer.from(`Task:${randomUUID()}`).toString('base64');
    const task = await cli(['watch', taskId]);
    expect(task.code).toBe(2);
    expect(oneLineError(task)).toMatch(/^chatgpu: "\S+" is a Task id, not a job's \(/);

    for (const args of [['watch'], ['watch', id, id], ['watch', id, '--follow']]) {
      const u = await cli(args);
      expect(u.code, args.join(' ')).toBe(2);
      oneLineError(u);
    }
    const help = await cli(['watch', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: chatgpu watch JOB/);
  });
});

describe('chatgpu answer', () => {
  it('shows the question without an answer, refuses a choice out of range and bad usage, answers by text, then finds no open question', async () => {
    const id = await submit(TWO_ENTRY_POINTS);
    const q = (await waitingForAnswer(id)).openQuestions[0]!;
    expect(q.choices).toEqual(['main.py', 'train.py']);

    const show = await cli(['answer', id]);
    expect(show.code).toBe(2);
    expect(show.stdout).toBe(`? ${q.text}\n    1) main.py\n    2) train.py\n`);
    expect(show.stderr).toBe(`chatgpu: Give your answer: chatgpu answer ${id} --choice N.\n`);

    const range = await cli(['answer', id, '--choice', '3']);
    expect(range.code).toBe(1);
    expect(oneLineError(range)).toBe(`chatgpu: Choice 3 is out of range: “${q.text}” has 2 choices (1) main.py, 2) train.py).\n`);

    for (const [args, message] of [
      [['answer'], /^chatgpu: Give the job and your answer/],
      [['answer', id, 'train.py', '--choice', '2'], /^chatgpu: Give either your answer in words or --choice N, not both\.\n$/],
      [['answer', id, '--choice', '0'], /^chatgpu: --choice takes the number of a choice, 1 or more \(got "0"\)\.\n$/],
      [['answer', id, '--choice', 'two'], /^chatgpu: --choice takes the number of a choice, 1 or more \(got "two"\)\.\n$/],
      [['answer', id, '--choice'], /^chatgpu: .*--choice.*\(see --help\)\.\n$/],
      [['answer', 'nope', 'train.py'], /^chatgpu: "nope" is not a job id/],
    ] as const) {
      const u = await cli([...args]);
      expect(u.code, args.join(' ')).toBe(2);
      expect(oneLineError(u)).toMatch(message);
    }
    // Nothing above answered it.
    expect((await jobState(id)).openQuestions).toHaveLength(1);

    const garbage = await cli(['answer', id, '%%%', 'garbage']);
    expect(garbage.code).toBe(1);
    expect(oneLineError(garbage)).toBe(
      'chatgpu: “%%% garbage” names none of the choices. Answer with one of them, by its number or its words: 1) main.py; 2) train.py. (2 more answers that name none and the job stops.)\n',
    );
    const other = await api.signUp();
    const notYours = await cli(['answer', id, 'train.py'], { token: other.token });
    expect(notYours.code).toBe(1);
    expect(oneLineError(notYours)).toBe(`chatgpu: No job ${id} (or it is not yours).\n`);

    const r = await cli(['answer', id, 'train.py']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Answered “${q.text}”: train.py\nFollow the job with: chatgpu watch ${id}\n`);
    expect((await jobState(id)).questions).toEqual([{ text: q.text, status: 'ANSWERED', answer: 'train.py' }]);

    const again = await cli(['answer', id, 'main.py']);
    expect(again.code).toBe(1);
    expect(oneLineError(again)).toMatch(
      new RegExp(`^chatgpu: Job ${id.replace(/[+=/]/g, '\\$&')} has no open question \\(it is [A-Z_]+\\)\\.\\n$`),
    );

    // The answer took effect: the planner goes on and the job runs the chosen script.
    const done = await waitFor(
      async () => {
        const j = await jobState(id);
        return ['SUCCEEDED', 'FAILED'].includes(j.status) ? j : null;
      },
      60_000,
      'the job to end',
    );
    expect(done.status, done.statusReason ?? '').toBe('SUCCEEDED');
  });

  it('a question without choices takes words only', async () => {
    // Not from the planner: a question row as the planner would write it (free-text).
    const id = await submit(TWO_ENTRY_POINTS);
    await waitingForAnswer(id);
    const jobId = Buffer.from(id, 'base64').toString('utf8').split(':')[1]!;
    await api.server.db.prisma.question.updateMany({ where: { jobId, status: 'OPEN' }, data: { choices: [] } });
    const pick = await cli(['answer', id, '--choice', '1']);
    expect(pick.code).toBe(1);
    expect(oneLineError(pick)).toMatch(
      /^chatgpu: “Which script should run\?[^”]*” has no choices to pick from: answer it in words, chatgpu answer \S+ "your answer"\.\n$/,
    );
    const words = await cli(['answer', id, 'the', 'training', 'one']);
    expect(words.code, words.stderr).toBe(0);
    expect(words.stdout).toMatch(/: the training one\n/);
    expect((await jobState(id)).questions.map((q) => q.answer)).toEqual(['the training one']);
    await cli(['cancel', id]);
  });
});
