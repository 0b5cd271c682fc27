// The console's front-end: who is signed in, the navigation, and the page the location's hash
// names (#/overview, #/keys, #/users, #/users/<oId>, #/online, #/unknown, #/webhooks,
// #/webhooks/<id>, #/events), with the page's query after a `?` (#/users?q=…, #/webhooks?app=…, #/events?category=…).
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Me } from '../../contract/console.js';
import { api, type ApiError, useToken } from './api.js';
import { EventsPageView, filterOf } from './pages/events.js';
import { KeysPage } from './pages/keys.js';
import { OnlinePage } from './pages/online.js';
import { OverviewPage } from './pages/overview.js';
import { UnknownPage } from './pages/unknown.js';
import { UserPage, UsersPage } from './pages/users.js';
import { WebhookEndpointPage, WebhooksPage } from './pages/webhooks.js';
import { Failure, Loading } from './states.js';
import './console.css';

const NAV = [
  ['#/overview', 'Overview'],
  ['#/keys', 'Keys'],
  ['#/users', 'Users'],
  ['#/online', 'Online'],
  ['#/unknown', 'Unknown outcomes'],
  ['#/webhooks', 'Webhooks'],
  ['#/events', 'Event log'],
] as const;

function useHash(): string {
  const [hash, setHash] = useState(location.hash || '#/overview');
  useEffect(() => {
    const changed = () => setHash(location.hash || '#/overview');
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return hash;
}

function Page({ hash }: { hash: string }) {
  const [path, search = ''] = hash.slice(1).split('?');
  const user = /^\/users\/([A-Za-z0-9]+)$/.exec(path!);
  if (user) return <UserPage oId={user[1]!} />;
  const endpoint = /^\/webhooks\/([a-z0-9]{15})$/.exec(path!);
  if (endpoint) return <WebhookEndpointPage id={endpoint[1]!} key={endpoint[1]} />;
  switch (path) {
    case '/keys':
      return <KeysPage />;
    case '/users':
      return <UsersPage query={new URLSearchParams(search).get('q') ?? ''} key={search} />;
    case '/online':
      return <OnlinePage />;
    case '/unknown':
      return <UnknownPage />;
    case '/webhooks':
      return <WebhooksPage app={new URLSearchParams(search).get('app') ?? undefined} key={search} />;
    case '/events':
      return <EventsPageView filter={filterOf(new URLSearchParams(search))} key={search} />;
    default:
      return <OverviewPage />;
  }
}

function SignInNeeded({ error }: { error: ApiError }) {
  const refused = error.status === 403;
  return (
    <main class="refusal">
      <h1>{refused ? 'Not a console operator' : 'community-bridge console'}</h1>
      <p>{refused ? error.message : 'Operators sign in with their community account.'}</p>
      <p>
        <a class="button" href="/console/login">
          Sign in with the community
        </a>
      </p>
    </main>
  );
}

function App() {
  const [me, setMe] = useState<Me>();
  const [error, setError] = useState<ApiError>();
  const hash = useHash();
  useEffect(() => {
    api<Me>('/me').then((found) => {
      useToken(found.token);
      setMe(found);
    }, setError);
  }, []);
  if (!me) {
    if (error && (error.status === 401 || error.status === 403)) return <SignInNeeded error={error} />;
    return error ? (
      <main class="refusal">
        <Failure error={error} />
      </main>
    ) : (
      <Loading />
    );
  }
  const logout = async () => {
    await api('/logout', {}).catch(() => undefined);
    location.assign('/console/');
  };
  return (
    <>
      <header class="top">
        <a class="brand" href="#/overview">
          community-bridge <span>console</span>
        </a>
        <nav aria-label="Console">
          {NAV.map(([href, label]) => (
            <a href={href} aria-current={hash.startsWith(href) ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <div class="who">
          <span title={`oId ${me.oId}`}>{me.nickname || me.name}</span>
          <button type="button" onClick={logout}>
            Sign out
          </button>
        </div>
      </header>
      <main>
        <Page hash={hash} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
