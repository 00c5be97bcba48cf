import { useMutation, useQuery } from '@apollo/client/react';
import { useState, type FormEvent } from 'react';
import { graphql } from '../gql';
import { CopyField } from '../features/ui/CopyField';
import { Empty, ErrorState, Loading } from '../features/ui/States';
import { TokenCells, TokenHeadings } from '../features/ui/TokenColumns';

const TokensQuery = graphql(`
  query ApiTokens {
    me {
      id
      apiTokens {
        id
        name
        prefix
        createdAt
        lastUsedAt
      }
    }
  }
`);

const CreateToken = graphql(`
  mutation CreateApiToken($input: CreateTokenInput!) {
    createApiToken(input: $input) {
      __typename
      ... on CreatedApiToken {
        token
        apiToken {
          id
        }
      }
      ... on ValidationError {
        message
      }
    }
  }
`);

const RevokeToken = graphql(`
  mutation RevokeApiToken($id: ID!) {
    revokeApiToken(id: $id) {
      __typename
      ... on Error {
        message
      }
    }
  }
`);

export default function TokensPage() {
  const { data, loading, error, refetch } = useQuery(TokensQuery);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<string | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [create, c] = useMutation(CreateToken);
  const [revoke] = useMutation(RevokeToken);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setFormError(null);
    try {
      const r = (await create({ variables: { input: { name } } })).data?.createApiToken;
      if (r?.__typename === 'CreatedApiToken') {
        setCreated(r.token);
        setName('');
        await refetch();
      } else setFormError(r?.message ?? 'No answer from the API.');
    } catch (err) {
      setFormError((err as Error).message);
    }
  };

  const doRevoke = async (id: string) => {
    try {
      const r = (await revoke({ variables: { id } })).data?.revokeApiToken;
      if (r && 'message' in r) setFormError(r.message);
    } catch (err) {
      setFormError((err as Error).message);
    }
    await refetch();
  };

  const tokens = data?.me?.apiTokens ?? [];
  return (
    <>
      <h1>API tokens</h1>
      <p className="muted">Use a token in the Authorization header (Bearer …) to call the API from scripts.</p>
      <form className="panel row" onSubmit={submit} aria-label="Create an API token">
        <label htmlFor="tokenName" style={{ margin: 0 }}>
          New token name
        </label>
        <input id="tokenName" required value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. ci" />
        <button className="primary" type="submit" disabled={c.loading}>
          Create token
        </button>
        {formError && (
          <span className="error-text" role="alert">
            {formError}
          </span>
        )}
      </form>
      {created && (
        <div className="panel" data-testid="new-token">
          <h2>Your new token</h2>
          <p className="muted">It is shown once: copy it now. Only its hash is kept.</p>
          <CopyField value={created} label="API token" />
        </div>
      )}
      <section className="panel">
        {loading && !data ? (
          <Loading />
        ) : error && !data ? (
          <ErrorState error={error} retry={() => void refetch()} />
        ) : tokens.length === 0 ? (
          <Empty>No API tokens yet.</Empty>
        ) : (
          <table>
            <thead>
              <tr>
                <TokenHeadings />
                <th />
              </tr>
            </thead>
            <tbody>
              {tokens.map((t) => (
                <tr key={t.id}>
                  <TokenCells token={t} />
                  <td>
                    <button type="button" className="danger" onClick={() => void doRevoke(t.id)}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}
