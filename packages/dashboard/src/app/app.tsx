import { useEffect, useMemo, useState } from 'react';
import { ApiClient, ApiError, type StoreStatistics } from './api/api-client';
import { Link } from './components/states';
import { matchPath, useLocation } from './lib/router';
import { loadToken, saveToken, takeTokenFromUrl } from './lib/token-store';
import { ReleasesPage } from './pages/releases-page';
import { ResourcesPage } from './pages/resources-page';
import { RewardsPage } from './pages/rewards-page';
import { RolloutDetailPage } from './pages/rollout-detail-page';
import { RolloutsPage } from './pages/rollouts-page';
import { RunnersPage } from './pages/runners-page';
import { TracesPage, TraceView } from './pages/trace-page';
import { TrafficPage } from './pages/traffic-page';

const NAV = [
  { to: '/rollouts', label: 'Rollouts', match: /^\/($|rollouts)/ },
  { to: '/traffic', label: 'Live traffic', match: /^\/traffic/ },
  { to: '/traces', label: 'Traces', match: /^\/traces/ },
  { to: '/rewards', label: 'Rewards', match: /^\/rewards/ },
  { to: '/resources', label: 'Resources', match: /^\/resources/ },
  { to: '/releases', label: 'Releases', match: /^\/releases/ },
  { to: '/runners', label: 'Runners', match: /^\/runners/ },
];

function TokenForm({ onSave, failed }: { onSave: (token: string) => void; failed: boolean }) {
  const [value, setValue] = useState('');
  return (
    <form
      className="token-form"
      data-testid="token-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (value.trim()) onSave(value.trim());
      }}
    >
      <h2>This store server needs a token</h2>
      <p>
        Enter the token the server was started with (<code>--token</code> / <code>AGL_STORE_TOKEN</code>). It is kept
        for this tab only (session storage).
      </p>
      {failed ? <p className="state error">That token was refused; check it and try again.</p> : null}
      <input
        aria-label="Store token"
        type="password"
        autoComplete="off"
        value={value}
        onChange={(e) => setValue(e.target.value)}
      />
      <button type="submit">Connect</button>
    </form>
  );
}

function Page({ client, path, query }: { client: ApiClient; path: string; query: URLSearchParams }) {
  let params = matchPath('/rollouts/:id', path);
  if (params) return <RolloutDetailPage client={client} rolloutId={params.id!} attemptId={query.get('attempt')} />;
  params = matchPath('/traces/:rolloutId/:attemptId', path);
  if (params) return <TraceView client={client} rolloutId={params.rolloutId!} attemptId={params.attemptId!} />;
  if (path === '/' || path === '/rollouts')
    return <RolloutsPage key={query.get('resources') ?? ''} client={client} resourcesId={query.get('resources')} />;
  if (path === '/traces') return <TracesPage />;
  if (path === '/traffic') return <TrafficPage client={client} query={query} />;
  if (path === '/rewards') return <RewardsPage client={client} />;
  if (path === '/resources') return <ResourcesPage client={client} />;
  if (path === '/releases') return <ReleasesPage client={client} />;
  if (path === '/runners') return <RunnersPage client={client} />;
  return <p className="state empty">No page at {path}.</p>;
}

/** Options of {@link App}. */
export interface AppProps {
  /** Store server origin; default the page's own. */
  baseUrl?: string;
}

/** The dashboard: navigation, the token gate, and the pages. */
export function App({ baseUrl = '' }: AppProps) {
  const [token, setToken] = useState<string | null>(() => takeTokenFromUrl() ?? loadToken());
  const [auth, setAuth] = useState<'checking' | 'ok' | 'needed' | 'refused'>('checking');
  const [stats, setStats] = useState<StoreStatistics | null>(null);
  const [storeLabel, setStoreLabel] = useState<string | null>(null);
  const [offline, setOffline] = useState<string | null>(null);
  const client = useMemo(() => new ApiClient({ baseUrl, token }), [baseUrl, token]);
  const location = useLocation();

  useEffect(() => {
    let cancelled = false;
    const check = () =>
      client.statistics().then(
        (s) => {
          if (cancelled) return;
          setStats(s);
          setAuth('ok');
          setOffline(null);
          client.storeLabel().then(
            (label) => !cancelled && setStoreLabel(label),
            () => undefined,
          );
        },
        (error: unknown) => {
          if (cancelled) return;
          if (error instanceof ApiError && error.status === 401) setAuth(token ? 'refused' : 'needed');
          else setOffline(error instanceof Error ? error.message : String(error));
        },
      );
    void check();
    const timer = setInterval(() => void check(), 5000);
    return () => {
      cancelled = true;
      clearInterval(timer);
    };
  }, [client, token]);

  const save = (value: string | null) => {
    saveToken(value);
    setToken(value);
    setAuth('checking');
  };

  return (
    <div className="app">
      <header className="topbar">
        <span className="brand">⚡ AGL</span>
        <nav>
          {NAV.map((n) => (
            <Link key={n.to} to={n.to} className={n.match.test(location.path) ? 'active' : undefined}>
              {n.label}
            </Link>
          ))}
        </nav>
        {storeLabel ? (
          <span className="stats muted" data-testid="store-label" title="The store this server serves">
            {storeLabel}
          </span>
        ) : null}
        <span className="stats muted" data-testid="store-stats">
          {stats
            ? `${stats.total_rollouts} rollouts · ${stats.total_spans} spans · ${stats.total_workers} runners`
            : ''}
        </span>
        <button type="button" className="token-button" onClick={() => save(null)} title="Forget the token for this tab">
          Token{token ? ' ✓' : ''}
        </button>
      </header>
      {offline && auth !== 'needed' ? (
        <div className="state error banner" role="alert">
          Cannot reach the store server: {offline}
        </div>
      ) : null}
      <main>
        {/* The page fetches its data at once, in parallel with the store check: a first paint shows the page (its own
            loading state, then its data), never a connection screen; a 401 on the check swaps in the token form. */}
        {auth === 'needed' || auth === 'refused' ? (
          <TokenForm onSave={save} failed={auth === 'refused'} />
        ) : (
          <Page client={client} path={location.path} query={location.query} />
        )}
      </main>
    </div>
  );
}
