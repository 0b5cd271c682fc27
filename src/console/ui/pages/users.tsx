// Users: the newest ones, a search by oId or name, and one user's page — profile, VIP, every
// platform operation with its outcome (the audit), sessions, open connections, and a test push.
import { useState } from 'preact/hooks';
import type { OperationView, PushSent, UserDetail, UserList } from '../../../contract/console.js';
import { api, ApiError } from '../api.js';
import { fields, when } from '../format.js';
import { useApi } from '../hooks.js';
import { Badge, Failure, Loading } from '../states.js';
import { type Column, Table } from '../table.js';

/** A user's oId, linking to their page. */
export function oIdColumn<Row extends { oId: string }>(): Column<Row> {
  return {
    label: 'oId',
    sort: (u) => u.oId,
    render: (u) => (
      <a href={`#/users/${u.oId}`}>
        <code>{u.oId}</code>
      </a>
    ),
  };
}

/** With no search: the service's newest users (`GET /users` without `q`). */
export function UsersPage({ query }: { query: string }) {
  const [text, setText] = useState(query);
  const { data, error, loading } = useApi<UserList>(query ? `/users?q=${encodeURIComponent(query)}` : '/users');
  return (
    <section>
      <h1>Users</h1>
      <search>
        <form
          class="search"
          onSubmit={(event) => {
            event.preventDefault();
            location.hash = text.trim() ? `#/users?q=${encodeURIComponent(text.trim())}` : '#/users';
          }}
        >
          <input type="search" name="q" value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder="oId, name or nickname" aria-label="Search users" />
          <button type="submit" class="primary">
            Search
          </button>
        </form>
      </search>
      {error ? (
        <Failure error={error} />
      ) : loading || !data ? (
        <Loading />
      ) : (
        <>
          {!query && <p class="subtle">The newest users this service knows; search for anyone else.</p>}
          <Table
            label={query ? 'Users found' : 'Newest users'}
            rows={data.users}
            rowKey={(u) => u.oId}
            empty={query ? `No user matches “${query}”.` : 'This service has not acted on any user yet.'}
            columns={[
              oIdColumn(),
              { label: 'Name', sort: (u) => u.name, render: (u) => <a href={`#/users/${u.oId}`}>{u.name}</a> },
              { label: 'Nickname', sort: (u) => u.nickname, render: (u) => u.nickname },
              { label: 'Registered here', sort: (u) => u.registered, render: (u) => when(u.registered) },
              { label: 'Online', sort: (u) => Number(u.online), render: (u) => <Badge status={u.online ? 'online' : 'offline'} /> },
            ]}
          />
        </>
      )}
    </section>
  );
}

function outcomeText(op: OperationView): string {
  if (op.resolution) return `resolved by ${op.resolution.by.name ?? op.resolution.by.appId}${op.resolution.note ? `: ${op.resolution.note}` : ''}`;
  return op.outcome?.detail ?? 'no outcome recorded yet';
}

function TestPush({ oId }: { oId: string }) {
  const [name, setName] = useState('console-test');
  const [data, setData] = useState('{"text": "Hello from the console"}');
  const [result, setResult] = useState<string>();
  const [error, setError] = useState<ApiError>();
  const send = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setResult(undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return setError(new ApiError(400, 'data: is not valid JSON', 'data'));
    }
    try {
      const sent = await api<PushSent>(`/users/${oId}/push`, { body: { name, data: parsed } });
      setResult(sent.online ? 'Sent: the user is online and receives it now.' : 'Recorded: the user has no open connection right now.');
    } catch (e) {
      setError(e as ApiError);
    }
  };
  return (
    <form class="panel" onSubmit={send} aria-label="Test push">
      <h2>Send a test push</h2>
      <label>
        Name
        <input name="name" value={name} onInput={(e) => setName(e.currentTarget.value)} aria-invalid={error?.field === 'name'} />
      </label>
      <label>
        Data (a JSON object)
        <textarea name="data" rows={3} value={data} onInput={(e) => setData(e.currentTarget.value)} aria-invalid={error?.field === 'data'} />
      </label>
      {error && <Failure error={error} />}
      {result && (
        <p class="success" role="status">
          {result}
        </p>
      )}
      <button type="submit" class="primary">
        Push
      </button>
    </form>
  );
}

export function UserPage({ oId }: { oId: string }) {
  const { data, error, reload } = useApi<UserDetail>(`/users/${encodeURIComponent(oId)}`);
  if (!data) return error ? <Failure error={error} retry={reload} /> : <Loading />;
  const { user } = data;
  return (
    <section>
      <p>
        <a href="#/users">← Users</a>
      </p>
      <header class="profile">
        <span class="avatar" aria-hidden="true">
          {(user.nickname || user.name).slice(0, 1).toUpperCase()}
        </span>
        <div>
          <h1>{user.nickname || user.name}</h1>
          <p class="subtle">
            {user.name} · oId <code>{user.oId}</code> · user id <code>{user.userId}</code> · registered here {when(user.registered)} ·{' '}
            <Badge status={user.online ? 'online' : 'offline'} />
          </p>
        </div>
      </header>
      <h2>VIP records</h2>
      <Table
        label="VIP records"
        rows={data.vip}
        rowKey={(r) => r.id}
        empty="No VIP record."
        columns={[
          { label: 'Quality', sort: (r) => r.quality, render: (r) => <Badge status={r.quality} /> },
          { label: 'Expires', sort: (r) => r.expired, render: (r) => when(r.expired) },
          { label: 'Created', sort: (r) => r.created, render: (r) => when(r.created) },
          { label: 'Updated', sort: (r) => r.updated, render: (r) => when(r.updated) },
        ]}
      />
      <h2>Points, medals and items (audit)</h2>
      <Table
        label="Operations"
        rows={data.operations}
        rowKey={(o) => o.operationId}
        empty="No platform operation for this user."
        initialSort={{ column: 0, descending: true }}
        columns={[
          { label: 'Requested', sort: (o) => o.position, render: (o) => when(o.requestedAt) },
          { label: 'Kind', sort: (o) => o.kind, render: (o) => o.kind.replace('Requested', '') },
          { label: 'Request', render: (o) => fields(o.request) },
          { label: 'App', sort: (o) => o.appId, render: (o) => <code>{o.appId}</code> },
          {
            label: 'Outcome',
            sort: (o) => o.status,
            render: (o) => (
              <>
                <Badge status={o.status} /> <span class="subtle">{outcomeText(o)}</span>
              </>
            ),
          },
        ]}
      />
      <div class="split">
        <div>
          <h2>Sessions</h2>
          <Table
            label="Sessions"
            rows={data.sessions}
            rowKey={(s) => String(s.position)}
            empty="Never signed in through this service."
            initialSort={{ column: 0, descending: true }}
            columns={[
              { label: 'Started', sort: (s) => s.started, render: (s) => when(s.started) },
              { label: 'Expires', sort: (s) => s.expires, render: (s) => when(s.expires) },
              { label: 'State', sort: (s) => Number(s.live), render: (s) => <Badge status={s.live ? 'live' : s.ended ? 'ended' : 'expired'} /> },
            ]}
          />
        </div>
        <div>
          <h2>Open connections</h2>
          <Table
            label="Connections"
            rows={data.connections}
            rowKey={(c) => c.clientId}
            empty="No open connection."
            columns={[
              { label: 'Client', render: (c) => <code>{c.clientId}</code> },
              { label: 'Node', sort: (c) => c.node ?? '', render: (c) => c.node ?? '—' },
            ]}
          />
        </div>
      </div>
      <TestPush oId={user.oId} />
    </section>
  );
}
