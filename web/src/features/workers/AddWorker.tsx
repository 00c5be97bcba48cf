import { useMutation } from '@apollo/client/react';
import { useState, type FormEvent } from 'react';
import { graphql } from '../../gql';
import { WorkerCommand } from './WorkerCommand';
import { WorkerTokensQuery } from './WorkerTokens';

const CreateWorkerToken = graphql(`
  mutation CreateWorkerToken($input: CreateTokenInput!) {
    createWorkerToken(input: $input) {
      __typename
      ... on CreatedWorkerToken {
        token
        command
        workerToken {
          id
          name
          prefix
        }
      }
      ... on ValidationError {
        message
      }
    }
  }
`);

/** Creates a worker token and shows the API's one-line start command (the token is shown once). */
export function AddWorker() {
  const [name, setName] = useState('');
  const [command, setCommand] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The token list (WorkerTokens) shows the new token too.
  const [create, { loading }] = useMutation(CreateWorkerToken, { refetchQueries: [WorkerTokensQuery] });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      const r = (await create({ variables: { input: { name } } })).data?.createWorkerToken;
      if (r?.__typename === 'CreatedWorkerToken') {
        setCommand(r.command);
        setName('');
      } else setError(r?.message ?? 'No answer from the API.');
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <section className="panel" aria-label="Add a worker">
      <h2>Add a worker</h2>
      <p className="muted">
        Create a token for the machine, then run the command on it. The worker only makes outbound connections; you can pause it at any
        time.
      </p>
      <form className="row" onSubmit={submit}>
        <label htmlFor="workerTokenName" style={{ margin: 0 }}>
          Machine name
        </label>
        <input id="workerTokenName" required value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. desktop-4090" />
        <button type="submit" className="primary" disabled={loading}>
          Create worker token
        </button>
      </form>
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      {command && (
        <WorkerCommand command={command} testId="worker-command">
          <p className="muted small">Run this on the machine (the token is shown once; only its hash is kept):</p>
        </WorkerCommand>
      )}
    </section>
  );
}
