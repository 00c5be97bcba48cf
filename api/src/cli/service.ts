/**
 * `chatgpu service JOB [--new-token] [--stop] [--json]`: a job's hosted endpoint — its URL,
 * readiness, requests and latency — and its access token. Tokens are stored hashed, so a
 * token is printed only when it is issued: the first call issues the first one (unless the
 * job page already did), `--new-token` replaces it (the old one stops working at once).
 */
import { parseArgs } from 'node:util';
import { CliError, jobIdArg } from './apiClient.js';
import { connect, globalOptionSpecs } from './config.js';
import { age, TERMINAL_STATUSES } from './format.js';
import type { CliServiceFieldsFragment, CliServiceQuery } from './gql/graphql.js';

const USAGE = `usage: chatgpu service JOB [--new-token] [--stop] [--json] [--server URL] [--token TOKEN]

  Shows the job's endpoint: URL, readiness, requests and mean latency. The first call
  issues its access token and prints it once (requests send "Authorization: Bearer TOKEN").
  URL is the service's own host (<slug>.svc.…: browsers, curl); API URL is the same app
  under the API's address, for programs whose resolver does not reach that host.
  --new-token  issue a new token (the previous one stops working at once)
  --stop       stop the service (its URL answers 410; the job ends SUCCEEDED)
  --json       the service as JSON (with "token" when one was issued by this call)
`;

const SERVICE_FIELDS = /* GraphQL */ `
  fragment CliServiceFields on Service {
    url
    apiUrl
    status
    ready
    readyAt
    stoppedAt
    tokenRotatedAt
    requestCount
    errorCount
    meanLatencyMs
    readinessChecks
    readinessFailures
  }
`;
const SHOW = /* GraphQL */ `
  query CliService($id: ID!) {
    job(id: $id) {
      id
      title
      status
      statusReason
      service {
        ...CliServiceFields
      }
    }
  }
  ${SERVICE_FIELDS}
`;
const ROTATE = /* GraphQL */ `
  mutation CliServiceToken($id: ID!, $firstOnly: Boolean) {
    rotateServiceToken(jobId: $id, firstOnly: $firstOnly) {
      __typename
      ... on ServiceToken {
        token
        service {
          ...CliServiceFields
        }
      }
      ... on Error {
        message
      }
    }
  }
  ${SERVICE_FIELDS}
`;
const STOP = /* GraphQL */ `
  mutation CliServiceStop($id: ID!) {
    stopService(jobId: $id) {
      __typename
      ... on Service {
        ...CliServiceFields
      }
      ... on Error {
        message
      }
    }
  }
  ${SERVICE_FIELDS}
`;

// The documents' result types, generated from them (api/src/cli/gql, npm run codegen).
type Service = CliServiceFieldsFragment;
type Job = NonNullable<CliServiceQuery['job']>;
type Answer = { __typename: string; message?: string };

export async function serviceCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { ...globalOptionSpecs, 'new-token': { type: 'boolean' }, stop: { type: 'boolean' }, json: { type: 'boolean' } },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new CliError('Give the job: chatgpu service JOB (its id from chatgpu jobs).', 2);
  if (values.stop && values['new-token']) throw new CliError('--stop and --new-token do not go together.', 2);
  const id = jobIdArg(positionals[0]!, 'service');
  const client = await connect(values);

  const job = (await client.gql<{ job: Job | null }>(SHOW, { id })).job;
  if (!job) throw new CliError(`No job ${positionals[0]} (or it is not yours).`);
  if (!job.service) {
    const why = ['DRAFT', 'PLANNING', 'NEEDS_INPUT'].includes(job.status)
      ? `it is ${job.status} (a service appears once its plan asks for an endpoint)`
      : 'its plan has no endpoint';
    throw new CliError(`Job ${job.id} has no service: ${why}.`);
  }
  let service = job.service;
  let token: string | null = null;
  let shown = job;

  if (values.stop) {
    // Safe to send again after an outage: a repeat is refused as already stopped.
    const r = (await client.gql<{ stopService: Answer & Partial<Service> }>(STOP, { id }, { idempotent: true })).stopService;
    if (r.__typename === 'Service') service = r as Service;
    else if (!(r.__typename === 'ConflictError' && service.stoppedAt))
      throw new CliError(r.message ?? `Unexpected answer: ${r.__typename}.`);
    // How the job ended with it (SUCCEEDED only for a service that was ever ready).
    shown = (await client.gql<{ job: Job }>(SHOW, { id })).job ?? job;
  } else if (values['new-token'] || (!service.tokenRotatedAt && !service.stoppedAt)) {
    // The first token only while none was issued (the job page may be issuing it at this moment).
    const r = (
      await client.gql<{ rotateServiceToken: Answer & { token?: string; service?: Service } }>(ROTATE, {
        id,
        firstOnly: !values['new-token'],
      })
    ).rotateServiceToken;
    if (r.__typename === 'ServiceToken') ({ token, service } = r as { token: string; service: Service });
    else if (r.__typename === 'ConflictError' && !values['new-token'])
      service = (await client.gql<{ job: Job }>(SHOW, { id })).job.service!;
    else throw new CliError(r.message ?? `Unexpected answer: ${r.__typename}.`);
  }

  if (values.json) {
    const counts = {
      requestCount: Number(service.requestCount),
      errorCount: Number(service.errorCount),
      readinessChecks: Number(service.readinessChecks),
      readinessFailures: Number(service.readinessFailures),
    };
    process.stdout.write(
      JSON.stringify({ job: job.id, jobStatus: shown.status, ...service, ...counts, ...(token ? { token } : {}) }, null, 2) + '\n',
    );
    return 0;
  }
  process.stdout.write(render(shown, service, token));
  return 0;
}

function render(job: Job, s: Service, token: string | null): string {
  const lines = [
    `Service of job ${job.id} (${job.title})`,
    `  URL:       ${s.url}`,
    `  API URL:   ${s.apiUrl}  (the same app for programs: bearer token only, no cookies)`,
  ];
  if (s.status === 'STOPPED') lines.push(`  status:    STOPPED${s.stoppedAt ? ` ${age(s.stoppedAt)} ago` : ''} (its URL answers 410)`);
  if (TERMINAL_STATUSES.has(job.status)) lines.push(`  job:       ${job.status}${job.statusReason ? `: ${job.statusReason}` : ''}`);
  else if (s.ready) lines.push(`  status:    READY${s.readyAt ? ` since ${age(s.readyAt)}` : ''}`);
  else lines.push('  status:    STARTING (not ready yet, or moving to another worker: requests get 503 with Retry-After)');
  if (token) {
    lines.push(`  token:     ${token}`, '             shown once: keep it (--new-token issues another and voids this one)');
  } else if (s.tokenRotatedAt) {
    lines.push(`  token:     issued ${age(s.tokenRotatedAt)} ago, not shown again (--new-token issues another and voids it)`);
  } else {
    lines.push('  token:     none issued');
  }
  const requests = Number(s.requestCount);
  lines.push(
    `  requests:  ${requests}${requests ? ` (${Number(s.errorCount)} failed), mean latency ${s.meanLatencyMs} ms` : ''}`,
    `  checks:    ${Number(s.readinessChecks)} readiness checks (${Number(s.readinessFailures)} failed; not in the app's log)`,
  );
  if (s.status !== 'STOPPED') {
    lines.push(`  try:       curl -H "Authorization: Bearer ${token ?? 'TOKEN'}" ${s.url}`);
    lines.push('  browser:   the job page\'s "Open in browser" (a cookie of the service\'s own host; the token never enters the page)');
  }
  return `${lines.join('\n')}\n`;
}
