/**
 * `chatgpu` command dispatcher: parses only the subcommand name and hands the rest
 * of argv to the subcommand's module. User commands talk only to the public API.
 */
type Command = { run(argv: string[]): Promise<number>; client?: boolean };

const commands: Record<string, () => Promise<Command>> = {
  login: async () => ({ run: (await import('./login.js')).loginCommand, client: true }),
  submit: async () => ({ run: (await import('./submit.js')).submitCommand, client: true }),
  jobs: async () => ({ run: (await import('./jobs.js')).jobsCommand, client: true }),
  logs: async () => ({ run: (await import('./logs.js')).logsCommand, client: true }),
  cancel: async () => ({ run: (await import('./cancel.js')).cancelCommand, client: true }),
  service: async () => ({ run: (await import('./service.js')).serviceCommand, client: true }),
  watch: async () => ({ run: (await import('./watch.js')).watchCommand, client: true }),
  answer: async () => ({ run: (await import('./answer.js')).answerCommand, client: true }),
  start: async () => ({ run: (await import('./start.js')).startCommand }),
  worker: async () => ({ run: (await import('./worker.js')).workerCommand }),
  migrate: async () => ({ run: (await import('../preparation/migrateCommand.js')).migrateCommand }),
  records: async () => ({ run: (await import('./records.js')).recordsCommand, client: true }),
};

const USAGE = `usage: chatgpu <command> [options]

  login    sign in and save a token for this server
  submit   upload a folder and say what you want done (--wait to follow it live)
  watch    follow a job you submitted, live, as submit --wait does (--out DIR)
  answer   answer a job's open question (TEXT or --choice N)
  jobs     list your jobs
  logs     print a job's log lines (-f to follow)
  cancel   cancel a job
  service  a job's endpoint: URL, token, readiness, requests (--new-token, --stop)
  start    run the API, dashboard and a local worker (same as npm start)
  worker   run a contributor worker (chatgpu worker --help)
  migrate  migrate code for other hardware
  records  preparation records: list, export (--json), write and re-check regression cases

Server: --server URL or CHATGPU_URL (default http://localhost:4000).
Token:  --token, CHATGPU_TOKEN, \`chatgpu login\`, or on the embedded default the local user's.
\`chatgpu <command> --help\` shows a command's options.
`;

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const load = commands[name];
  if (!load) {
    process.stderr.write(`chatgpu: unknown command ${JSON.stringify(name)}.\n${USAGE}`);
    return 2;
  }
  const command = await load();
  let code: number;
  try {
    code = await command.run(rest);
  } catch (err) {
    code = report(err);
  }
  if (command.client) {
    // A client command is done: let stdout drain, then make sure no leftover handle
    // (a socket, stdin) keeps the process alive.
    setTimeout(() => process.exit(code), 3000).unref();
  }
  return code;
}

function report(err: unknown): number {
  const e = err as { name?: string; message?: string; exitCode?: number; code?: string; stack?: string };
  if (e?.name === 'CliError' || e?.name === 'ApiError') {
    process.stderr.write(`chatgpu: ${e.message}\n`);
    return e.exitCode ?? 1;
  }
  // node:util parseArgs: unknown option, missing value… (some of its messages span lines)
  if (typeof e?.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`chatgpu: ${(e.message ?? '').replace(/\s*\n\s*/g, ' ')} (see --help).\n`);
    return 2;
  }
  process.stderr.write(`chatgpu: unexpected error: ${e?.message ?? String(err)}\n`);
  if (process.env.CHATGPU_DEBUG) process.stderr.write(`${e?.stack ?? ''}\n`);
  return 1;
}
