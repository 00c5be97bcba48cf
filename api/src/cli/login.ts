/**
 * `chatgpu login [--email E] [--password P]`: signs in (the `logIn` mutation), makes a
 * long-lived API token named after this machine, and saves it for this server in
 * ~/.config/chatgpu/credentials.json (mode 0600). Prompts for what is missing: the
 * password without echo on a terminal; otherwise reads lines from stdin.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { ApiClient, CliError } from './apiClient.js';
import { resolveServer, retryOptions, saveCredentials } from './config.js';
import { Prompter } from './prompt.js';

const LOG_IN = /* GraphQL */ `
  mutation CliLogIn($input: LogInInput!) {
    logIn(input: $input) {
      __typename
      ... on AuthPayload {
        token
        user {
          email
        }
      }
      ... on Error {
        message
      }
    }
  }
`;

const CREATE_TOKEN = /* GraphQL */ `
  mutation CliCreateToken($input: CreateTokenInput!) {
    createApiToken(input: $input) {
      __typename
      ... on CreatedApiToken {
        token
      }
      ... on Error {
        message
      }
    }
  }
`;

export async function loginCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      server: { type: 'string' },
      email: { type: 'string', short: 'e' },
      password: { type: 'string', short: 'p' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write('usage: chatgpu login [--email E] [--password P] [--server URL]\n');
    return 0;
  }
  if (positionals.length) throw new CliError(`Unexpected argument ${positionals[0]}; see chatgpu login --help.`, 2);
  const server = resolveServer(values.server);
  const prompter = new Prompter();
  let email: string | null | undefined = values.email?.trim();
  let password: string | null | undefined = values.password;
  try {
    if (!email) email = await prompter.ask('Email: ');
    if (!email) throw new CliError('No email given: pass --email or type it at the prompt.', 2);
    if (!password) password = await prompter.ask('Password: ', { hidden: true });
    if (!password) throw new CliError('No password given: pass --password or type it at the prompt.', 2);
  } finally {
    prompter.close();
  }

  const anon = new ApiClient(server, null, undefined, retryOptions());
  // Sent again after an outage: a repeat only opens another session, and the one not kept expires.
  const d = await anon.gql<{ logIn: { __typename: string; token?: string; user?: { email: string }; message?: string } }>(
    LOG_IN,
    { input: { email, password } },
    { idempotent: true },
  );
  const r = d.logIn;
  if (r.__typename !== 'AuthPayload' || !r.token) throw new CliError(`Login failed: ${r.message ?? r.__typename}`);

  // A session expires; an API token named after this machine does not (revocable in the dashboard).
  let token = r.token;
  try {
    const session = new ApiClient(server, r.token, 'the new session token', retryOptions());
    const t = await session.gql<{ createApiToken: { __typename: string; token?: string } }>(CREATE_TOKEN, {
      input: { name: `chatgpu CLI on ${os.hostname()}`.slice(0, 100) },
    });
    if (t.createApiToken.__typename === 'CreatedApiToken' && t.createApiToken.token) token = t.createApiToken.token;
  } catch {
    /* keep the session token */
  }
  const file = await saveCredentials(server, token, r.user?.email ?? email);
  process.stdout.write(`Logged in to ${server} as ${r.user?.email ?? email}; token saved in ${file}.\n`);
  return 0;
}
