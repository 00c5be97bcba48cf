/**
 * `chatgpu answer JOB [TEXT | --choice N]`: answers the job's open question (the oldest
 * one when several are open) without a dashboard or a `watch` at the prompt. Without an
 * answer it shows the question and its numbered choices, and exits 2.
 * Exit code: 0 when answered, 2 on a usage error, else 1 (no such job, no open question,
 * a choice out of range, the question closed meanwhile).
 */
import { parseArgs } from 'node:util';
import { CliError, jobIdArg } from './apiClient.js';
import { connect, globalOptionSpecs, globalOptionsUsage } from './config.js';
import { answerHint, fetchJobState, printerFor, questionLines, sendAnswer, type Question } from './follow.js';
import { oneLine } from './format.js';

const USAGE = `usage: chatgpu answer JOB [TEXT | --choice N]

Answers the job's open question (the oldest, when several are open); the planner goes on.
Without TEXT or --choice it shows the question and its numbered choices.

  TEXT            your answer in words (several words are joined with spaces)
  --choice N      pick the question's Nth choice (1 is the first)
${globalOptionsUsage(16)}`;

export async function answerCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { ...globalOptionSpecs, choice: { type: 'string', short: 'c' } },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const [raw, ...words] = positionals;
  if (!raw) throw new CliError('Give the job and your answer: chatgpu answer JOB "your answer" (or --choice N).', 2);
  const text = words.join(' ').trim();
  if (words.length && !text) throw new CliError('The answer is empty; see chatgpu answer --help.', 2);
  if (text && values.choice !== undefined) throw new CliError('Give either your answer in words or --choice N, not both.', 2);
  let choice: number | null = null;
  if (values.choice !== undefined) {
    choice = /^\s*\d+\s*$/.test(values.choice) ? Number(values.choice) : NaN;
    if (!Number.isSafeInteger(choice) || choice < 1)
      throw new CliError(`--choice takes the number of a choice, 1 or more (got ${JSON.stringify(values.choice)}).`, 2);
  }
  const id = jobIdArg(raw, 'answer');
  const client = await connect(values);
  const state = await fetchJobState(client, id);
  if (!state) throw new CliError(`No job ${raw} (or it is not yours).`);
  const [q, ...others] = state.openQuestions;
  if (!q) throw new CliError(`Job ${raw} has no open question (it is ${state.status}).`);

  const out = printerFor(process.stdout);
  if (!text && choice === null) {
    for (const l of questionLines(q)) out.line(l);
    throw new CliError(`Give your answer: ${answerHint(raw, q)}.`, 2);
  }
  let answer = text;
  if (choice !== null) {
    if (q.choices.length === 0)
      throw new CliError(`${quote(q)} has no choices to pick from: answer it in words, chatgpu answer ${raw} "your answer".`);
    if (choice > q.choices.length) {
      throw new CliError(
        `Choice ${choice} is out of range: ${quote(q)} has ${q.choices.length} choice${q.choices.length === 1 ? '' : 's'} (${numbered(q)}).`,
      );
    }
    answer = q.choices[choice - 1]!;
  }

  const r = await sendAnswer(client, q.id, answer);
  if (r.__typename !== 'Question') throw new CliError(r.message ?? `Unexpected answer: ${r.__typename}.`);
  out.line(`Answered ${quote(q)}: ${oneLine(r.answer ?? answer, 200)}`);
  if (others.length)
    out.line(
      `${others.length} more question${others.length === 1 ? ' is' : 's are'} open: ${others.map(quote).join(', ')} (chatgpu answer ${raw} again).`,
    );
  else out.line(`Follow the job with: chatgpu watch ${raw}`);
  return 0;
}

function quote(q: Question): string {
  return `“${oneLine(q.text, 200)}”`;
}

function numbered(q: Question): string {
  return q.choices.map((c, i) => `${i + 1}) ${oneLine(c, 80)}`).join(', ');
}
