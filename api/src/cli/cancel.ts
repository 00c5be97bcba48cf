/** `chatgpu cancel JOB`: cancels one of your jobs (its tasks stop, open questions close). */
import { parseArgs } from 'node:util';
import { CliError, toJobId } from './apiClient.js';
import { connect, globalOptionSpecs } from './config.js';

const CANCEL = /* GraphQL */ `
  mutation CliCancel($id: ID!) {
    cancelJob(id: $id) {
      __typename
      ... on Job {
        id
        status
        statusReason
      }
      ... on Error {
        message
      }
    }
  }
`;

export async function cancelCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { ...globalOptionSpecs } });
  if (values.help) {
    process.stdout.write('usage: chatgpu cancel JOB [--server URL] [--token TOKEN]\n');
    return 0;
  }
  if (positionals.length !== 1) throw new CliError('Give the job to cancel: chatgpu cancel JOB (its id from chatgpu jobs).', 2);
  const id = toJobId(positionals[0]!);
  const client = await connect(values);
  // Safe to send again after an outage: a repeat changes nothing (the job is already final).
  const d = await client.gql<{ cancelJob: { __typename: string; id?: string; status?: string; message?: string } }>(
    CANCEL,
    { id },
    { idempotent: true },
  );
  const r = d.cancelJob;
  if (r.__typename === 'NotFoundError') throw new CliError(`No job ${positionals[0]} (or it is not yours).`);
  if (r.__typename === 'ConflictError') throw new CliError(r.message ?? 'The job cannot be cancelled now.');
  if (r.__typename !== 'Job') throw new CliError(r.message ?? `Unexpected answer: ${r.__typename}.`);
  process.stdout.write(`Cancelled job ${r.id}.\n`);
  return 0;
}
