/**
 * A finished job's results: its summary (status, plan, acceptance criteria, tasks with
 * their results and metrics, evaluation, validation) and, with an output folder, every
 * file of `Job.outputs` downloaded byte-identical (sha256-checked) plus job.json.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CliError, type ApiClient } from './apiClient.js';
import { bytes } from './format.js';
import type { Printer } from './follow.js';
import type { OutputPrefetch } from './prefetch.js';

const RESULT = /* GraphQL */ `
  query CliJobResult($id: ID!) {
    job(id: $id) {
      id
      title
      request
      status
      statusReason
      costCad
      spendingCapCad
      estimateText
      estimate {
        basis
        durationSec
        lowSec
        highSec
        costCad
        lowCad
        highCad
        peakMemoryMiB
        outputBytes
        actualSec
        actualCostCad
        ratio
      }
      hardwarePreference
      createdAt
      startedAt
      finishedAt
      acceptanceCriteria
      currentPlan {
        id
        version
        author
        summary
        steps
        command
        environment
        requirements
        outputs
        acceptanceCriteria
        asks {
          ask
          kind
          status
          detail
          setting
        }
        settings
      }
      askOutcomes {
        ask
        kind
        status
        detail
        outcome
        line
      }
      outputs {
        path
        sha256
        size
        mode
      }
      outputsValidated
      validation {
        badge
        label
        reason
      }
      preparationRecords {
        id
        step
        kind
        revision
        required
        transformation
        outcome
        reason
        hardware
        numericalCheck
        timings
        staticChecks
        evidenceSha
        createdAt
      }
      tasks {
        id
        name
        kind
        status
        statusReason
        command
        result
        attempts {
          number
          status
          workerName
          exitCode
          errorClass
          errorMessage
          metrics
          usage
          startedAt
          finishedAt
        }
      }
    }
  }
`;

const VALIDATION_EVENTS = /* GraphQL */ `
  query CliValidationEvents($id: ID!, $after: String) {
    job(id: $id) {
      id
      events(after: $after, first: 1000) {
        id
        kind
        payload
        createdAt
      }
    }
  }
`;

interface OutputFile {
  path: string;
  sha256: string;
  size: number;
  mode: number;
}

interface TaskResult {
  id: string;
  name: string;
  kind: string;
  status: string;
  statusReason: string | null;
  command: string;
  result: { outputs?: OutputFile[]; metrics?: unknown; [k: string]: unknown } | null;
  attempts: Record<string, unknown>[];
}

interface JobResult {
  id: string;
  title: string;
  request: string;
  status: string;
  statusReason: string | null;
  costCad: unknown;
  estimate: {
    durationSec: number;
    lowSec: number;
    highSec: number;
    costCad: number;
    lowCad: number;
    highCad: number;
    actualSec: number | null;
    ratio: number | null;
  } | null;
  spendingCapCad: unknown;
  estimateText: string | null;
  hardwarePreference: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  acceptanceCriteria: unknown;
  currentPlan: Record<string, unknown> | null;
  outputs: OutputFile[];
  outputsValidated: boolean;
  validation: { badge: string; label: string; reason: string | null };
  preparationRecords: {
    id: string;
    step: string;
    revision: number;
    outcome: string;
    reason: string;
    evidenceSha: string | null;
    [k: string]: unknown;
  }[];
  askOutcomes: { ask: string; kind: string; status: string; detail: string; outcome: string; line: string }[];
  tasks: TaskResult[];
}

/** A path from the server, made safe to join under the output folder. */
export function safeOutputPath(p: string): string {
  const parts = p
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  if (parts.length === 0 || parts.some((s) => s === '..') || /^[A-Za-z]:/.test(parts[0]!)) {
    throw new CliError(`The server listed an unsafe output path: ${JSON.stringify(p)}.`);
  }
  return parts.join('/');
}

export async function downloadResults(
  client: ApiClient,
  jobId: string,
  opts: {
    outDir?: string | undefined;
    url: string;
    validation?: unknown[];
    out: Printer;
    /** Outputs already fetched while the job validated: moved into place instead of downloaded. */
    prefetch?: OutputPrefetch;
  },
): Promise<Record<string, unknown>> {
  const d = await client.gql<{ job: JobResult | null }>(RESULT, { id: jobId });
  const job = d.job;
  if (!job) throw new CliError(`No job ${jobId} (or it is not yours).`);
  const validation = opts.validation?.length ? opts.validation : await validationEvents(client, jobId);
  if (job.askOutcomes.length) {
    opts.out.line('What you asked:');
    for (const a of job.askOutcomes) opts.out.line(`  ${a.outcome === 'done' ? '✓' : a.outcome === 'planned' ? '·' : '✗'} ${a.line}`);
  }

  const metrics: Record<string, unknown> = {};
  const evaluation: Record<string, unknown>[] = [];
  for (const t of job.tasks) {
    const m = t.result?.metrics;
    if (m && typeof m === 'object') metrics[t.name] = m;
    if (t.kind === 'EVALUATE')
      evaluation.push({ task: t.name, status: t.status, statusReason: t.statusReason, metrics: m ?? null, result: t.result });
  }
  const summary: Record<string, unknown> = {
    id: job.id,
    url: opts.url,
    title: job.title,
    request: job.request,
    status: job.status,
    statusReason: job.statusReason,
    costCad: job.costCad,
    spendingCapCad: job.spendingCapCad,
    estimate: job.estimate,
    estimateText: job.estimateText,
    hardwarePreference: job.hardwarePreference,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    plan: job.currentPlan,
    // Each ask of the request and what became of it (invariant 12).
    asks: job.askOutcomes,
    acceptanceCriteria: job.acceptanceCriteria ?? job.currentPlan?.acceptanceCriteria ?? null,
    metrics,
    evaluation,
    validation,
    outputs: job.outputs,
    // Only a SUCCEEDED job's outputs passed its checks; the others are kept but not validated.
    validated: job.outputsValidated,
    // The same words as the dashboard's outputs and timeline (validated, by replication, unverified: why).
    trust: job.validation,
    preparation: job.preparationRecords,
    tasks: job.tasks.map((t) => ({
      name: t.name,
      kind: t.kind,
      status: t.status,
      statusReason: t.statusReason,
      command: t.command,
      result: t.result,
      attempts: t.attempts,
    })),
  };

  if (!opts.outDir) return summary;
  const outDir = path.resolve(opts.outDir);
  await mkdir(outDir, { recursive: true });
  let total = 0;
  for (const f of job.outputs) {
    const rel = safeOutputPath(f.path);
    const target = path.join(outDir, rel);
    await mkdir(path.dirname(target), { recursive: true });
    const size = (await opts.prefetch?.take(f.sha256, target)) ?? (await client.downloadBlob(f.sha256, target));
    if (f.mode & 0o111) await chmod(target, 0o755);
    total += size;
    opts.out.line(`  ↓ ${rel} (${bytes(size)})`);
  }
  let evidence = 0;
  for (const rec of job.preparationRecords) {
    if (!rec.evidenceSha) continue;
    evidence++;
    const rel = `evidence/${safeOutputPath(rec.step)}${rec.revision ? `-r${rec.revision}` : ''}.tar.gz`;
    await mkdir(path.join(outDir, 'evidence'), { recursive: true });
    await client.downloadBlob(rec.evidenceSha, path.join(outDir, rel));
    opts.out.line(`  ↓ ${rel} (evidence for ${rec.step}: ${rec.outcome.toLowerCase()})`);
  }
  if (job.outputs.length && !job.outputsValidated) {
    opts.out.line(
      `Not validated: the job ended ${job.status.toLowerCase()}, so these outputs did not pass its checks${job.statusReason ? ` (${job.statusReason})` : ''}.`,
    );
  }
  const names = new Set(job.outputs.map((f) => safeOutputPath(f.path)));
  const jsonName = names.has('job.json') ? 'chatgpu-job.json' : 'job.json';
  await writeFile(path.join(outDir, jsonName), JSON.stringify(summary, null, 2) + '\n');
  opts.out.line(
    `Saved ${job.outputs.length} output file${job.outputs.length === 1 ? '' : 's'} (${bytes(total)})${evidence ? `, ${evidence} evidence bundle${evidence === 1 ? '' : 's'} (evidence/),` : ''} and ${jsonName} in ${opts.outDir}.`,
  );
  return { ...summary, outDir };
}

async function validationEvents(client: ApiClient, jobId: string): Promise<unknown[]> {
  const found: unknown[] = [];
  let after: string | null = null;
  for (let page = 0; page < 20; page++) {
    const d: { job: { events: { id: string; kind: string; payload: unknown }[] } | null } = await client.gql(VALIDATION_EVENTS, {
      id: jobId,
      after,
    });
    const evs = d.job?.events ?? [];
    for (const e of evs) if (e.kind === 'validation') found.push(e.payload);
    if (evs.length < 1000) break;
    after = evs.at(-1)!.id;
  }
  return found;
}
