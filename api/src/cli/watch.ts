/**
 * `chatgpu watch JOB [--out DIR] [--json]`: re-attaches to a job already submitted and
 * follows it exactly as `submit --wait` does (followToEnd.ts): its history first, then
 * live; open questions are asked at the prompt (or read from stdin, one line each).
 * Exit code: 0 when the job SUCCEEDED, 130 when stopped with Ctrl-C, 2 on a usage error,
 * 3 when a question waits and stdin (not a terminal) has no more lines, else 1.
 */
import { parseArgs } from 'node:util';
import { CliError, jobIdArg } from './apiClient.js';
import { connect, globalOptionSpecs, globalOptionsUsage } from './config.js';
import { fetchJobState, printerFor } from './follow.js';
import { followToEnd, jobUrl } from './followToEnd.js';

const USAGE = `usage: chatgpu watch JOB [options]

Follows a job you submitted earlier, as submit --wait does: plan, agent steps, logs,
metrics, then its final status. The planner's questions are asked at the prompt (piped
stdin: one answer a line; an answer that names none of the choices is refused and the next
line is read; when stdin ends with a question open it exits 3 and says how to answer with
chatgpu answer).

  --out DIR       download the outputs and job.json into DIR when the job ends
  --json          machine-readable result on stdout (progress goes to stderr)
${globalOptionsUsage(16)}`;

export async function watchCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { ...globalOptionSpecs, out: { type: 'string', short: 'o' }, json: { type: 'boolean' } },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new CliError('Give the job to follow: chatgpu watch JOB (its id from chatgpu jobs).', 2);
  const id = jobIdArg(positionals[0]!, 'watch');
  const client = await connect(values);
  const state = await fetchJobState(client, id);
  if (!state) throw new CliError(`No job ${positionals[0]} (or it is not yours).`);

  const json = !!values.json;
  const info = printerFor(json ? process.stderr : process.stdout);
  const url = jobUrl(client, id);
  info.line(`Job ${id} (${state.title}): ${url}`);
  return followToEnd(client, id, { info, url, outDir: values.out, json });
}
