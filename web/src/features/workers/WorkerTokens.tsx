import { useMutation, useQuery } from '@apollo/client/react';
import { useState } from 'react';
import { graphql } from '../../gql';
import { Empty, ErrorState, Loading } from '../ui/States';
import { TokenCells, TokenHeadings } from '../ui/TokenColumns';
import { WorkerCommand } from './WorkerCommand';

export const WorkerTokensQuery = graphql(`
  query WorkerTokens {
    me {
      id
      workerTokens {
        ...WorkerTokenFields
      }
    }
  }
`);

const WorkerTokenFields = graphql(`
  fragment WorkerTokenFields on WorkerToken {
    id
    name
    prefix
    createdAt
    lastUsedAt
  }
`);
void WorkerTokenFields;

// Error results are named by type, not by the Error interface: the cache has no possibleTypes,
// so it would drop the fields of an `... on Error` fragment and the error would go unseen.
// The row comes back normalized (WorkerToken:id), so the list shows the new prefix without a refetch.
const RotateWorkerToken = graphql(`
  mutation RotateWorkerToken($id: ID!) {
    rotateWorkerToken(id: $id) {
      __typename
      ... on CreatedWorkerToken {
        command
        workerToken {
          ...WorkerTokenFields
        }
      }
      ... on NotFoundError {
        message
      }
    }
  }
`);

const RevokeWorkerToken = graphql(`
  mutation RevokeWorkerToken($id: ID!) {
    revokeWorkerToken(id: $id) {
      __typename
      ... on NotFoundError {
        message
      }
    }
  }
`);

/**
 * The user's worker tokens, each with Rotate (a new secret, shown once as the start command;
 * the old one is refused from its next call) and Revoke (after a confirmation; the token's
 * workers are refused from their next call). Which workers use a token is not in the API.
 */
export function WorkerTokens() {
  const tokens = useQuery(WorkerTokensQuery);
  const [rotate] = useMutation(RotateWorkerToken);
  const [revoke] = useMutation(RevokeWorkerToken);
  const [busy, setBusy] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [rotated, setRotated] = useState<{ id: string; name: string; command: string } | null>(null);
  const [error, setError] = useState<string | null>(null);

  /**
   * Runs one mutation on a token. Any result but `success` (NotFoundError: revoked or rotated
   * away elsewhere) is shown, and the list reloaded since it is out of date.
   */
  const act = async (id: string, success: string, run: () => Promise<{ __typename: string; message?: string } | undefined>) => {
    setBusy(id);
    setError(null);
    try {
      const r = await run();
      if (!r) setError('No answer from the API.');
      else if (r.__typename !== success) {
        setError(r.message ?? `The API answered ${r.__typename}.`);
        await tokens.refetch();
      }
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(null);
    }
  };

  const doRotate = (id: string, name: string) =>
    act(id, 'CreatedWorkerToken', async () => {
      const r = (await rotate({ variables: { id } })).data?.rotateWorkerToken;
      if (r?.__typename === 'CreatedWorkerToken') setRotated({ id, name, command: r.command });
      return r;
    });

  const doRevoke = (id: string) =>
    act(id, 'MutationRevokeWorkerTokenSuccess', async () => {
      const r = (await revoke({ variables: { id } })).data?.revokeWorkerToken;
      setConfirming(null);
      if (r?.__typename === 'MutationRevokeWorkerTokenSuccess') {
        if (rotated?.id === id) setRotated(null);
        await tokens.refetch();
      }
      return r;
    });

  const list = tokens.data?.me?.workerTokens ?? [];
  return (
    <section className="panel">
      <h2>Worker tokens</h2>
      <p className="muted small" style={{ marginTop: 0 }}>
        The secrets your workers sign in with. Rotate one that may have leaked; revoke one a machine no longer needs.
      </p>
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      {rotated && (
        <WorkerCommand command={rotated.command} testId="rotated-command">
          <p role="status" data-testid="rotated-notice">
            <strong>New secret for {rotated.name}.</strong> The old one stopped working just now: workers running with it are refused from
            their next call and must be restarted with this command. It is shown once; only its hash is kept.
          </p>
          <div>
            <button type="button" onClick={() => setRotated(null)}>
              Done
            </button>
          </div>
        </WorkerCommand>
      )}
      {tokens.loading && !tokens.data ? (
        <Loading lines={1} />
      ) : tokens.error && !tokens.data ? (
        <ErrorState error={tokens.error} retry={() => void tokens.refetch()} />
      ) : list.length === 0 ? (
        <Empty>No worker tokens yet. Add a worker above to create one.</Empty>
      ) : (
        <table aria-label="Worker tokens">
          <thead>
            <tr>
              <TokenHeadings />
              <th />
            </tr>
          </thead>
          <tbody>
            {list.map((t) => (
              <tr key={t.id} data-token={t.name}>
                <TokenCells token={t} />
                <td>
                  {confirming === t.id ? (
                    <div className="row" role="group" aria-label={`Revoke ${t.name}?`}>
                      <span className="small">Revoke it? Workers using it stop at their next call.</span>
                      <button type="button" className="danger" disabled={busy === t.id} onClick={() => void doRevoke(t.id)}>
                        Yes, revoke
                      </button>
                      <button type="button" disabled={busy === t.id} onClick={() => setConfirming(null)}>
                        Cancel
                      </button>
                    </div>
                  ) : (
                    <div className="row">
                      <button type="button" disabled={busy === t.id} onClick={() => void doRotate(t.id, t.name)}>
                        Rotate
                      </button>
                      <button type="button" className="danger" disabled={busy === t.id} onClick={() => setConfirming(t.id)}>
                        Revoke
                      </button>
                    </div>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
