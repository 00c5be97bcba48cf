/**
 * `chatgpu records` — preparation records (what each preparation step tried and decided):
 *
 *   chatgpu records [--outcome O[,O]] [--transformation T] [--workload W] [--accelerator A]
 *                   [--job ID] [--since ISO-DATE] [--first N] [--json]
 *       a table, or with --json one record per line (JSON lines, every field)
 *   chatgpu records case ID --out DIR
 *       writes a self-contained regression case (original files, the candidate's diff, the
 *       tolerance, the reference outputs, a README) from a record
 *   chatgpu records check DIR
 *       re-checks the case's transformation here; exit 0 when the outcome is the case's
 *       `expect`, 1 when it is not (e.g. a REJECTED case that still fails)
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { unifiedDiff } from '../preparation/diffs.js';
import { findPython } from '../preparation/findPython.js';
import { checkCase, readCase, writeCase, type CaseSpec } from '../preparation/regressionCase.js';
import { targetOfWorkload } from '../preparation/transformations.js';
import { CliError } from './apiClient.js';
import { connect, globalOptionSpecs } from './config.js';
import { age, oneLine, table } from './format.js';

const USAGE = `usage: chatgpu records [--outcome O[,O]] [--transformation T] [--workload W] [--accelerator A]
                       [--job ID] [--since DATE] [--first N] [--json]
       chatgpu records case ID --out DIR
       chatgpu records check DIR

  --outcome      ACCEPTED, REJECTED, SKIPPED, FALLBACK (comma-separated)
  --json         one record per line (JSON lines), every field
  case ID        write a regression case folder from the record with this id
  check DIR      re-check a regression case here (exit 0: the expected outcome)
`;

const OUTCOMES = ['ACCEPTED', 'REJECTED', 'SKIPPED', 'FALLBACK'];
const FIELDS = /* GraphQL */ `
  fragment CliRecordFields on PreparationRecord {
    id
    step
    kind
    revision
    required
    transformation
    outcome
    reason
    hardware
    workload
    accelerator
    taskId
    attemptId
    workerId
    originalCodeId
    originalManifestSha
    candidateCodeId
    candidateManifestSha
    staticChecks
    numericalCheck
    timings
    evidenceSha
    createdAt
    job {
      id
      title
    }
  }
`;

const LIST = /* GraphQL */ `
  query CliRecords($first: Int, $after: String, $filter: PreparationRecordFilter) {
    preparationRecords(first: $first, after: $after, filter: $filter) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          ...CliRecordFields
        }
      }
    }
  }
  ${FIELDS}
`;

const CASE = /* GraphQL */ `
  query CliRecordCase($id: ID!) {
    node(id: $id) {
      ... on PreparationRecord {
        ...CliRecordFields
        job {
          id
          currentPlan {
            preparation
          }
          codeVersions {
            id
            files {
              path
              sha256
              size
            }
          }
          tasks {
            kind
            status
            result
          }
        }
      }
    }
  }
  ${FIELDS}
`;

interface RecordRow {
  id: string;
  step: string;
  kind: string;
  revision: number;
  transformation: string;
  outcome: string;
  reason: string;
  workload: string | null;
  accelerator: string | null;
  originalCodeId: string;
  candidateCodeId: string | null;
  createdAt: string;
  job: { id: string; title?: string };
  [k: string]: unknown;
}

export async function recordsCommand(argv: string[]): Promise<number> {
  if (argv[0] === 'case') return caseCommand(argv.slice(1));
  if (argv[0] === 'check') return checkCommand(argv.slice(1));
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...globalOptionSpecs,
      outcome: { type: 'string', multiple: true },
      transformation: { type: 'string' },
      workload: { type: 'string' },
      accelerator: { type: 'string' },
      job: { type: 'string' },
      since: { type: 'string' },
      first: { type: 'string', short: 'n' },
      json: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length) throw new CliError(`Unexpected argument ${positionals[0]}; see chatgpu records --help.`, 2);
  const outcome = (values.outcome ?? [])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean);
  for (const o of outcome) if (!OUTCOMES.includes(o)) throw new CliError(`Unknown outcome ${o}; use one of ${OUTCOMES.join(', ')}.`, 2);
  const first = values.first === undefined ? 500 : Number(values.first);
  if (!Number.isInteger(first) || first < 1) throw new CliError(`--first must be a whole number (got ${values.first}).`, 2);
  if (values.since && Number.isNaN(Date.parse(values.since)))
    throw new CliError(`--since must be a date (e.g. 2026-12-01), got ${values.since}.`, 2);
  const filter = {
    ...(outcome.length ? { outcome } : {}),
    ...(values.transformation ? { transformation: values.transformation } : {}),
    ...(values.workload ? { workload: values.workload } : {}),
    ...(values.accelerator ? { accelerator: values.accelerator } : {}),
    ...(values.job ? { jobId: values.job } : {}),
    ...(values.since ? { since: new Date(values.since).toISOString() } : {}),
  };

  const client = await connect(values);
  const rows: RecordRow[] = [];
  let after: string | null = null;
  while (rows.length < first) {
    type Page = { preparationRecords: { pageInfo: { hasNextPage: boolean; endCursor: string | null }; edges: { node: RecordRow }[] } };
    const d: Page = await client.gql<Page>(LIST, { first: Math.min(first - rows.length, 500), after, filter });
    rows.push(...d.preparationRecords.edges.map((e) => e.node));
    if (!d.preparationRecords.pageInfo.hasNextPage) break;
    after = d.preparationRecords.pageInfo.endCursor;
  }
  if (values.json) {
    for (const r of rows) process.stdout.write(`${JSON.stringify(r)}\n`);
    return 0;
  }
  if (!rows.length) {
    process.stdout.write('No preparation records.\n');
    return 0;
  }
  process.stdout.write(
    table(
      ['id', 'job', 'step', 'transformation', 'outcome', 'on', 'age', 'reason'],
      rows.map((r) => [
        r.id,
        oneLine(r.job.title ?? r.job.id, 24),
        `${r.step}${r.revision ? `#${r.revision}` : ''}`,
        r.transformation,
        r.outcome,
        r.accelerator ?? r.workload ?? '',
        age(r.createdAt),
        oneLine(r.reason, 80),
      ]),
    ),
  );
  return 0;
}

async function caseCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { ...globalOptionSpecs, out: { type: 'string', short: 'o' } },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length !== 1 || !values.out) throw new CliError('usage: chatgpu records case ID --out DIR', 2);
  const client = await connect(values);
  type CaseData = {
    node:
      | (RecordRow & {
          job: {
            id: string;
            currentPlan: { preparation: any } | null;
            codeVersions: { id: string; files: { path: string; sha256: string; size: number }[] }[];
            tasks: { kind: string; status: string; result: any }[];
          };
        })
      | null;
  };
  const d = await client.gql<CaseData>(CASE, { id: positionals[0] });
  const rec = d.node;
  if (!rec) throw new CliError(`No preparation record ${positionals[0]} (or it is not yours).`);
  const spec = rec.job.currentPlan?.preparation as {
    workload: { command: string };
    target: { workload: string };
    steps: { name: string; tolerance?: { rtol?: number; atol?: number } | null }[];
  } | null;
  if (!spec) throw new CliError("The record's job has no preparation plan to take the bounded workload and target from.");
  const version = (id: string | null) => rec.job.codeVersions.find((v) => v.id === id);
  const original = version(rec.originalCodeId);
  if (!original) throw new CliError(`The original code version ${rec.originalCodeId} is not available.`);
  const download = async (files: { path: string; sha256: string }[]) =>
    Object.fromEntries(await Promise.all(files.map(async (f) => [f.path, await client.getBlob(f.sha256)] as const)));
  const originalFiles = await download(original.files);
  const candidate = version(rec.candidateCodeId);
  const candidateFiles = candidate ? await download(candidate.files) : {};
  const text = (t: Record<string, Buffer>) =>
    Object.fromEntries(
      Object.entries(t)
        .filter(([, b]) => !b.includes(0))
        .map(([p, b]) => [p, b.toString('utf8')]),
    );
  const reference = rec.job.tasks.find((t) => t.kind === 'REFERENCE' && t.status === 'SUCCEEDED');
  const referenceFiles = reference ? await download((reference.result?.outputs ?? []) as { path: string; sha256: string }[]) : {};
  const caseSpec: CaseSpec = {
    recordId: rec.id,
    jobId: rec.job.id,
    step: rec.step,
    revision: rec.revision,
    transformation:
      rec.transformation === 'agent patch'
        ? ((spec.steps.find((s) => s.name === rec.step) as { transformation?: string } | undefined)?.transformation ?? rec.transformation)
        : rec.transformation,
    target: targetOfWorkload(spec.target.workload),
    tolerance: spec.steps.find((s) => s.name === rec.step)?.tolerance ?? null,
    command: spec.workload.command,
    recorded: { outcome: rec.outcome, reason: rec.reason },
    expect: 'ACCEPTED',
  };
  const out = path.resolve(values.out);
  await writeCase(out, {
    spec: caseSpec,
    original: originalFiles,
    candidateDiff: unifiedDiff(text(originalFiles), text(candidateFiles)),
    reference: referenceFiles,
  });
  process.stdout.write(`Wrote the regression case to ${out}. Re-check it with: chatgpu records check ${out}\n`);
  return 0;
}

async function checkCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { help: { type: 'boolean', short: 'h' }, python: { type: 'string' }, json: { type: 'boolean' } },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new CliError('usage: chatgpu records check DIR', 2);
  const python = values.python ?? (await findPython({ modules: ['numpy'] }))?.path ?? (await findPython())?.path;
  if (!python) throw new CliError('No Python 3 found (needed to parse Python and compare outputs); pass --python PATH.', 2);
  const dir = path.resolve(positionals[0]!);
  const { spec } = await readCase(dir);
  const result = await checkCase(dir, { python });
  const ok = result.outcome === spec.expect;
  if (values.json) process.stdout.write(`${JSON.stringify({ ...result, expect: spec.expect, ok })}\n`);
  else {
    process.stdout.write(
      `${spec.transformation} on ${spec.target}: ${result.outcome} (${result.reason}); expected ${spec.expect}${ok ? '' : ' — it does not match'}.\n`,
    );
    for (const n of result.notChecked) process.stdout.write(`  not checked here: ${n}\n`);
    for (const f of result.staticChecks.feedback.slice(0, 10))
      process.stdout.write(`  ${f.file}:${f.line}:${f.col}: ${f.severity}: ${f.message} [${f.tool}]\n`);
  }
  return ok ? 0 : 1;
}
