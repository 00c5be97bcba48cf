import { useMutation } from '@apollo/client/react';
import { useState, type FormEvent } from 'react';
import { graphql } from '../gql';
import { setToken } from '../lib/auth';
import { Link, navigate, useLocation } from '../lib/router';

const SignUp = graphql(`
  mutation SignUp($input: SignUpInput!) {
    signUp(input: $input) {
      __typename
      ... on AuthPayload {
        token
      }
      ... on ValidationError {
        message
        issues {
          path
          message
        }
      }
      ... on ConflictError {
        message
      }
    }
  }
`);

const LogIn = graphql(`
  mutation LogIn($input: LogInInput!) {
    logIn(input: $input) {
      __typename
      ... on AuthPayload {
        token
      }
      ... on ValidationError {
        message
        issues {
          path
          message
        }
      }
      ... on AuthenticationError {
        message
      }
    }
  }
`);

export function AuthPage({ mode }: { mode: 'login' | 'signup' }) {
  const { query } = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [signUp, su] = useMutation(SignUp);
  const [logIn, li] = useMutation(LogIn);
  const busy = su.loading || li.loading;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      const result =
        mode === 'signup'
          ? (await signUp({ variables: { input: { email, password, displayName: displayName || null } } })).data?.signUp
          : (await logIn({ variables: { input: { email, password } } })).data?.logIn;
      if (!result) return setError('No answer from the API.');
      if (result.__typename === 'AuthPayload') {
        const next = query.get('next');
        setToken(result.token);
        navigate(next && next.startsWith('/') && !next.startsWith('//') && next !== '/login' ? next : '/jobs', { replace: true });
        return;
      }
      const issues = result.__typename === 'ValidationError' ? result.issues.map((i) => i.message).join(' ') : '';
      setError(`${result.message}${issues ? ` ${issues}` : ''}`);
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <main style={{ maxWidth: 420, marginTop: '10vh' }}>
      <h1>ChatGPU</h1>
      <p className="muted">Run your code on other people's idle computers, planned and checked by agents.</p>
      <form className="panel" onSubmit={submit} aria-label={mode === 'signup' ? 'Sign up' : 'Log in'}>
        <h2>{mode === 'signup' ? 'Create an account' : 'Log in'}</h2>
        <div className="field">
          <label htmlFor="email">Email</label>
          <input
            id="email"
            type="email"
            autoComplete="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            style={{ width: '100%' }}
          />
        </div>
        {mode === 'signup' && (
          <div className="field">
            <label htmlFor="displayName">
              Name <span className="hint">(optional)</span>
            </label>
            <input id="displayName" value={displayName} onChange={(e) => setDisplayName(e.target.value)} style={{ width: '100%' }} />
          </div>
        )}
        <div className="field">
          <label htmlFor="password">Password</label>
          <input
            id="password"
            type="password"
            autoComplete={mode === 'signup' ? 'new-password' : 'current-password'}
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            style={{ width: '100%' }}
          />
        </div>
        {error && (
          <p className="error-text" role="alert">
            {error}
          </p>
        )}
        <div className="spread">
          <button className="primary" type="submit" disabled={busy}>
            {busy ? 'Please wait…' : mode === 'signup' ? 'Sign up' : 'Log in'}
          </button>
          {mode === 'signup' ? <Link to="/login">I have an account</Link> : <Link to="/signup">Create an account</Link>}
        </div>
      </form>
    </main>
  );
}
