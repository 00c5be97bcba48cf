/**
 * `chatgpu logs JOB [-f]`: the log lines of the job's attempts, in order (tasks by
 * creation, attempts by number), each attempt under a header line; stderr lines are
 * prefixed `[stderr] `, system lines `[system] `. With -f, keeps following live until
 * the job ends.
 */
import { parseArgs } from 'node:util';
import { CliError, toJobId } from './apiClient.js';
import { connect, globalOptionSpecs } from './config.js';
import { attemptHeader, fetchTasks, formatLogLine, JobFollower, LogReader, printerFor, type JobState } from './follow.js';
import { TERMINAL_STATUSES } from './format.js';

const USAGE = `usage: chatgpu logs JOB [-f] [--server URL] [--token TOKEN]

  -f, --follow   keep printing new lines until the job ends
`;

const STATE = /* GraphQL */ `
  query CliLogsJob($id: ID!) {
    job(id: $id) {
      id
      status
      statusReason
    }
  }
`;

export async function logsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { ...globalOptionSpecs, follow: { type: 'boolean', short: 'f' } },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new CliError('Give the job: chatgpu logs JOB [-f] (its id from chatgpu jobs).', 2);
  const id = toJobId(positionals[0]!);
  const client = await connect(values);
  const state = await client.gql<{ job: Pick<JobState, 'id' | 'status' | 'statusReason'> | null }>(STATE, { id });
  if (!state.job) throw new CliError(`No job ${positionals[0]} (or it is not yours).`);

  const out = printerFor(process.stdout);
  const printed = new Map<string, number>();
  const reader = new LogReader(client, id);
  let lines = 0;
  let lastAttempt: string | null = null;
  for (const t of await fetchTasks(client, id)) {
    for (const a of t.attempts) {
      let headed = false;
      for await (const l of reader.lines(a.id, -1)) {
        if (!headed) {
          out.line(attemptHeader({ taskName: t.name, kind: t.kind, number: a.number, worker: a.workerName }));
          headed = true;
        }
        out.line(formatLogLine(l));
        printed.set(a.id, l.seq);
        lastAttempt = a.id;
        lines++;
      }
    }
  }
  if (!values.follow) {
    if (lines === 0) process.stderr.write(`No log lines yet (the job is ${state.job.status}).\n`);
    return 0;
  }
  if (TERMINAL_STATUSES.has(state.job.status)) {
    process.stderr.write(`The job is ${state.job.status}${state.job.statusReason ? `: ${state.job.statusReason}` : '.'}\n`);
    return 0;
  }
  const followed = await new JobFollower({
    client,
    jobId: id,
    out,
    events: false,
    after: null,
    logStyle: 'raw',
    printed,
    lastAttempt,
  }).run();
  const s = followed.state;
  process.stderr.write(
    followed.interrupted ? 'Stopped following.\n' : `The job is ${s.status}${s.statusReason ? `: ${s.statusReason}` : '.'}\n`,
  );
  return followed.interrupted ? 130 : 0;
}
