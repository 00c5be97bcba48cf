import { ApolloProvider, useQuery } from '@apollo/client/react';
import { lazy, Suspense, useEffect, useMemo, type ReactNode } from 'react';
import { graphql } from './gql';
import { sessionFor, useConnection } from './lib/apollo';
import { setToken, useToken } from './lib/auth';
import { Link, match, navigate, useLocation } from './lib/router';
import { AuthPage } from './routes/AuthPage';
import { ErrorState, Loading } from './features/ui/States';

// Every page but sign-in is its own chunk: the initial route loads only the shell.
const JobsPage = lazy(() => import('./routes/JobsPage'));
const NewJobPage = lazy(() => import('./routes/NewJobPage'));
const JobPage = lazy(() => import('./routes/JobPage'));
const WorkersPage = lazy(() => import('./routes/WorkersPage'));
const TokensPage = lazy(() => import('./routes/TokensPage'));

const MeQuery = graphql(`
  query Me {
    me {
      id
      email
      displayName
    }
  }
`);

export function App() {
  const token = useToken();
  const session = useMemo(() => sessionFor(token), [token]);
  return <ApolloProvider client={session.client}>{token ? <SignedIn /> : <SignedOut />}</ApolloProvider>;
}

function SignedOut() {
  const { path } = useLocation();
  useEffect(() => {
    if (path !== '/login' && path !== '/signup') navigate(`/login?next=${encodeURIComponent(path)}`, { replace: true });
  }, [path]);
  return <AuthPage mode={path === '/signup' ? 'signup' : 'login'} />;
}

function SignedIn() {
  const { path } = useLocation();
  const { data, error, loading, refetch } = useQuery(MeQuery, { fetchPolicy: 'network-only' });
  useEffect(() => {
    // A token the API no longer accepts (revoked, expired): back to sign-in.
    if (data && data.me === null) setToken(null);
  }, [data]);
  useEffect(() => {
    if (path === '/' || path === '/login' || path === '/signup') navigate('/jobs', { replace: true });
  }, [path]);
  return (
    <div className="shell">
      <header className="topbar">
        <Link to="/jobs" className="brand">
          ChatGPU
        </Link>
        <nav aria-label="Main">
          <NavLink to="/jobs" path={path} exact>
            Jobs
          </NavLink>
          <NavLink to="/jobs/new" path={path} exact>
            New job
          </NavLink>
          <NavLink to="/workers" path={path}>
            Workers
          </NavLink>
          <NavLink to="/tokens" path={path}>
            API tokens
          </NavLink>
        </nav>
        <span className="muted small" data-testid="me">
          {data?.me?.displayName ?? data?.me?.email ?? ''}
        </span>
        <button type="button" onClick={() => setToken(null)}>
          Log out
        </button>
      </header>
      <ConnectionBanner />
      <main>
        {error && !data ? (
          <ErrorState error={error} retry={() => void refetch()} />
        ) : loading && !data ? (
          <Loading />
        ) : (
          <Suspense fallback={<Loading />}>{route(path)}</Suspense>
        )}
      </main>
    </div>
  );
}

function route(path: string): ReactNode {
  if (path === '/jobs') return <JobsPage />;
  if (path === '/jobs/new') return <NewJobPage />;
  const job = match('/jobs/:id', path);
  if (job) return <JobPage id={job.id!} />;
  if (path === '/workers') return <WorkersPage />;
  if (path === '/tokens') return <TokensPage />;
  if (path === '/' || path === '/login' || path === '/signup') return null;
  return (
    <div className="state">
      <h1>Not found</h1>
      <p>
        There is no page at <code>{path}</code>. <Link to="/jobs">Go to your jobs</Link>.
      </p>
    </div>
  );
}

function NavLink({ to, path, exact, children }: { to: string; path: string; exact?: boolean; children: ReactNode }) {
  const active = exact ? path === to || (to === '/jobs' && /^\/jobs\/(?!new$)/.test(path)) : path.startsWith(to);
  return (
    <Link to={to} aria-current={active ? 'page' : undefined}>
      {children}
    </Link>
  );
}

function ConnectionBanner() {
  const c = useConnection();
  const down = c.state === 'disconnected' || (c.state !== 'connected' && c.failures >= 2);
  if (!down) return null;
  return (
    <div className="banner" role="alert" data-testid="connection-banner">
      Lost the connection to the API — reconnecting… Live updates resume by themselves; nothing on this page is lost.
    </div>
  );
}
