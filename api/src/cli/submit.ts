/**
 * `chatgpu submit DIR -m "request" [--title T] [--cap CAD] [--hardware any|cpu|nvidia|amd|apple]
 *                  [--wait] [--out DIR] [--json]`
 *
 * Uploads the folder's files as blobs, creates the job, prints its id and dashboard URL.
 * With --wait it follows the job live (plan, agent steps, tasks, logs, metrics), answers
 * the planner's questions at the prompt (or line by line from stdin), and at the end
 * downloads the outputs into --out (sha256-checked) with a job.json summary — the same
 * as `chatgpu watch` on the job (followToEnd.ts).
 * Exit code: 0 when submitted (without --wait) or SUCCEEDED (with --wait), 3 with --wait
 * when a question waits and stdin (not a terminal) has no more lines (it says how to answer
 * with `chatgpu answer`; the job waits), else 1.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CliError, sha256Hex, unwrap, type ApiClient } from './apiClient.js';
import { connect, globalOptionSpecs, globalOptionsUsage } from './config.js';
import { bytes } from './format.js';
import { printerFor, type Printer } from './follow.js';
import { followToEnd, jobUrl } from './followToEnd.js';
import { walkProject, type WalkedFile } from './walk.js';

const USAGE = `usage: chatgpu submit DIR -m "what you want done" [options]

  -m, --message TEXT   what you want done, in plain words (required)
  --title TEXT         the job's title (default: the folder's name)
  --cap CAD            spending cap in CAD
  --hardware KIND      any | cpu | nvidia | amd | apple
  --wait               follow the job live until it ends; answer questions at the prompt
                       (no terminal: one answer a line of stdin; at its end, exit 3)
  --out DIR            with --wait: download the outputs and job.json into DIR
  --json               machine-readable result on stdout (progress goes to stderr)
${globalOptionsUsage(21)}`;

const CREATE_JOB = /* GraphQL */ `
  mutation CliCreateJob($input: CreateJobInput!) {
    createJob(input: $input) {
      __typename
      ... on Job {
        id
        title
        status
        createdAt
      }
      ... on ValidationError {
        message
        issues {
          path
          message
        }
      }
      ... on Error {
        message
      }
    }
  }
`;

/** The newest jobs, to tell a job this submission created from the ones that were there. */
const NEWEST_JOBS = /* GraphQL */ `
  query CliNewestJobs {
    jobs(first: 20) {
      edges {
        node {
          id
          title
          request
          status
          createdAt
        }
      }
    }
  }
`;

const HARDWARE = ['any', 'cpu', 'nvidia', 'amd', 'apple'];

export async function submitCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...globalOptionSpecs,
      message: { type: 'string', short: 'm' },
      title: { type: 'string' },
      cap: { type: 'string' },
      hardware: { type: 'string' },
      wait: { type: 'boolean', short: 'w' },
      out: { type: 'string', short: 'o' },
      json: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length !== 1)
    throw new CliError(`Give exactly one project folder (chatgpu submit DIR -m "…"); see chatgpu submit --help.`, 2);
  const request = values.message?.trim();
  if (!request) throw new CliError('Say what you want done with -m "…" (for example -m "train it for 2 epochs and give me the model").', 2);
  let cap: number | null = null;
  if (values.cap !== undefined) {
    cap = Number(values.cap);
    if (!Number.isFinite(cap) || cap <= 0) throw new CliError(`--cap must be a positive amount in CAD (got ${values.cap}).`, 2);
  }
  const hardware = values.hardware?.toLowerCase();
  if (hardware !== undefined && !HARDWARE.includes(hardware))
    throw new CliError(`--hardware must be one of ${HARDWARE.join(', ')} (got ${values.hardware}).`, 2);
  if (values.out && !values.wait) throw new CliError('--out needs --wait (outputs exist once the job has finished).', 2);

  const dir = positionals[0]!;
  const json = !!values.json;
  const info: Printer = printerFor(json ? process.stderr : process.stdout);
  const client = await connect(values);

  const { files, skipped } = await walkProject(dir);
  if (files.length === 0) throw new CliError(`${dir} has no files to upload.`, 2);
  for (const s of skipped) info.line(`skipped ${s}`);
  const total = files.reduce((s, f) => s + f.size, 0);
  const manifest = await uploadFiles(client, files);
  info.line(`Uploaded ${files.length} file${files.length === 1 ? '' : 's'} (${bytes(total)}).`);

  const title = values.title?.trim() || path.basename(path.resolve(dir)) || 'job';
  const r = await createJobOnce(client, {
    title,
    request,
    files: manifest,
    ...(cap !== null ? { spendingCapCad: cap } : {}),
    ...(hardware ? { hardwarePreference: hardware } : {}),
  });
  if (r.__typename === 'ValidationError' && r.issues?.length) {
    throw new CliError(
      `The server refused the job: ${r.message} (${r.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}).`,
    );
  }
  const job = unwrap(r, 'Job');
  const url = jobUrl(client, job.id);
  info.line(`Job ${job.id} submitted: ${url}`);

  if (!values.wait) {
    if (json)
      process.stdout.write(
        JSON.stringify({ id: job.id, url, title: job.title, status: job.status, files: files.length, bytes: total }) + '\n',
      );
    else info.line(`Follow it with: chatgpu watch ${job.id}   (or submit with --wait)`);
    return 0;
  }

  return followToEnd(client, job.id, { info, url, outDir: values.out, json });
}

type CreateJobResult = {
  __typename: string;
  id: string;
  title: string;
  status: string;
  message?: string;
  issues?: { path: string[]; message: string }[];
};
type JobNode = { id: string; title: string; request: string; status: string; createdAt: string };

/**
 * createJob, sent once even across an outage. The server does not dedupe it, so after an
 * outage that may have let it through (a reset mid-request, a 503 after its transaction
 * committed) the job is looked for — one of this user's newest jobs that was not there
 * before and has this title and request — before it is sent again. (Another submission
 * of the same title and request by the same user in those seconds would be taken for it.)
 */
async function createJobOnce(
  client: ApiClient,
  input: { title: string; request: string } & Record<string, unknown>,
): Promise<CreateJobResult> {
  const newest = async () => (await client.gql<{ jobs: { edges: { node: JobNode }[] } }>(NEWEST_JOBS)).jobs.edges.map((e) => e.node);
  const before = new Set((await newest()).map((j) => j.id));
  const d = await client.gqlOnce<{ createJob: CreateJobResult }>(CREATE_JOB, { input }, async () => {
    const made = (await newest()).find((j) => !before.has(j.id) && j.title === input.title.trim() && j.request === input.request.trim());
    return made ? { createJob: { __typename: 'Job', ...made } } : null;
  });
  return d.createJob;
}

/** Hashes and uploads every file (a few at a time, each distinct blob once); returns the manifest. */
async function uploadFiles(client: ApiClient, files: WalkedFile[]): Promise<{ path: string; sha256: string; mode: number }[]> {
  const manifest: { path: string; sha256: string; mode: number }[] = new Array(files.length);
  const uploaded = new Map<string, Promise<string>>();
  const tty = !!process.stderr.isTTY;
  let done = 0;
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const i = next++;
      const f = files[i]!;
      const buf = await readFile(f.abs);
      const sha = sha256Hex(buf);
      let p = uploaded.get(sha);
      if (!p) {
        p = client.putBlob(buf, sha);
        uploaded.set(sha, p);
      }
      await p;
      manifest[i] = { path: f.path, sha256: sha, mode: f.mode };
      done++;
      if (tty) process.stderr.write(`\rUploading ${done}/${files.length} files…`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(6, files.length) }, worker));
  if (tty) process.stderr.write('\r\x1b[K');
  return manifest;
}
