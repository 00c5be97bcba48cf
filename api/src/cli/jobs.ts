/**
 * `chatgpu jobs [--status S[,S…]] [--first N] [--json]`: your jobs, newest first, as a
 * table (id, title, status, cost, age).
 */
import { parseArgs } from 'node:util';
import { CliError } from './apiClient.js';
import { connect, globalOptionSpecs } from './config.js';
import { age, cad, oneLine, table } from './format.js';
import type { CliJobsQuery } from './gql/graphql.js';

const USAGE = `usage: chatgpu jobs [--status S[,S…]] [--first N] [--json] [--server URL] [--token TOKEN]

  --status S   only jobs in these statuses (e.g. RUNNING or succeeded,failed)
  --first N    how many (default 20, at most 100)
  --json       the jobs as JSON
`;

const STATUSES = ['DRAFT', 'PLANNING', 'NEEDS_INPUT', 'PREPARING', 'RUNNING', 'VALIDATING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'];

const JOBS = /* GraphQL */ `
  query CliJobs($first: Int, $status: [JobStatus!]) {
    jobs(first: $first, status: $status) {
      totalCount
      edges {
        node {
          id
          title
          status
          statusReason
          costCad
          spendingCapCad
          createdAt
        }
      }
    }
  }
`;

export async function jobsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...globalOptionSpecs,
      status: { type: 'string', short: 's', multiple: true },
      first: { type: 'string', short: 'n' },
      json: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length) throw new CliError(`Unexpected argument ${positionals[0]}; see chatgpu jobs --help.`, 2);
  const status = (values.status ?? [])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim().toUpperCase().replace(/-/g, '_'))
    .filter(Boolean);
  for (const s of status) if (!STATUSES.includes(s)) throw new CliError(`Unknown status ${s}; use one of ${STATUSES.join(', ')}.`, 2);
  const first = values.first === undefined ? 20 : Number(values.first);
  if (!Number.isInteger(first) || first < 1 || first > 100)
    throw new CliError(`--first must be a whole number from 1 to 100 (got ${values.first}).`, 2);

  const client = await connect(values);
  const d = await client.gql<CliJobsQuery>(JOBS, {
    first,
    status: status.length ? status : null,
  });
  const jobs = d.jobs.edges.map((e) => e.node);
  if (values.json) {
    process.stdout.write(JSON.stringify({ totalCount: d.jobs.totalCount, jobs }, null, 2) + '\n');
    return 0;
  }
  if (jobs.length === 0) {
    process.stdout.write(
      status.length ? `No jobs in ${status.join(', ')}.\n` : 'No jobs yet. Submit one with: chatgpu submit DIR -m "what you want done"\n',
    );
    return 0;
  }
  process.stdout.write(
    table(
      ['ID', 'TITLE', 'STATUS', 'COST (CAD)', 'AGE'],
      jobs.map((j) => [
        j.id,
        oneLine(j.title, 40),
        j.status,
        j.spendingCapCad !== null ? `${cad(j.costCad)} / ${cad(j.spendingCapCad)}` : cad(j.costCad),
        age(j.createdAt),
      ]),
    ),
  );
  if (d.jobs.totalCount > jobs.length) process.stdout.write(`(${jobs.length} of ${d.jobs.totalCount}; --first N shows more)\n`);
  return 0;
}
