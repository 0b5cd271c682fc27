// API keys: the list, a new key (its secret shown once, with a copy button), and the changes an
// operator makes to a key.
import { useState } from 'preact/hooks';
import type { KeyCreated, KeyList, KeyView } from '../../../contract/console.js';
import { PERMISSIONS } from '../../../domain/permissions.js';
import { api, ApiError } from '../api.js';
import { ago, when } from '../format.js';
import { useApi } from '../hooks.js';
import { Badge, Failure, Loading } from '../states.js';
import { Table } from '../table.js';

function NewKey({ onCreated }: { onCreated(created: KeyCreated): void }) {
  const [appId, setAppId] = useState('');
  const [app, setApp] = useState('');
  const [allApps, setAllApps] = useState(false);
  const [grants, setGrants] = useState<string[]>([]);
  const [expires, setExpires] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const toggle = (grant: string) => setGrants((g) => (g.includes(grant) ? g.filter((x) => x !== grant) : [...g, grant]));
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onCreated(await api<KeyCreated>('/keys', { body: { appId: appId.trim(), app: app.trim(), allApps, permissions: grants, expires: expires.trim() || null } }));
      setAppId('');
      setApp('');
      setAllApps(false);
      setGrants([]);
      setExpires('');
    } catch (e) {
      setError(e as ApiError);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel" onSubmit={submit} aria-label="New key">
      <h2>New key</h2>
      <label>
        App id
        <input name="appId" value={appId} onInput={(e) => setAppId(e.currentTarget.value)} placeholder="my-game" aria-invalid={error?.field === 'appId'} required />
        <small class="subtle">a-z 0-9 _ . - ; an existing app's id adds a key to it</small>
      </label>
      <label>
        App name (a new app)
        <input name="app" value={app} onInput={(e) => setApp(e.currentTarget.value)} placeholder="My Game" aria-invalid={error?.field === 'app'} />
      </label>
      <label class="check">
        <input type="checkbox" name="allApps" checked={allApps} onChange={() => setAllApps(!allApps)} /> Reaches every app's records (auditors, operators)
      </label>
      <fieldset aria-invalid={error?.field?.startsWith('permissions')}>
        <legend>Permissions</legend>
        <div class="grants">
          {['*', ...PERMISSIONS].map((grant) => (
            <label class="check">
              <input type="checkbox" name="permission" value={grant} checked={grants.includes(grant)} onChange={() => toggle(grant)} />
              <code>{grant === '*' ? '* (all)' : grant}</code>
            </label>
          ))}
        </div>
      </fieldset>
      <label>
        Expires (UTC, optional)
        <input name="expires" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} placeholder="2027-01-01 00:00:00" aria-invalid={error?.field === 'expires'} />
      </label>
      {error && <Failure error={error} />}
      <button type="submit" class="primary" disabled={busy}>
        Create key
      </button>
    </form>
  );
}

function Secret({ created, onDone }: { created: KeyCreated; onDone(): void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(created.secret).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  };
  return (
    <div class="panel secret" role="status">
      <h2>Key created for {created.key.app}</h2>
      <p>This is the only time the key is shown; only its hash is stored. Copy it now.</p>
      <div class="secret-row">
        <code id="secret">{created.secret}</code>
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

export function KeysPage() {
  const { data, error, reload } = useApi<KeyList>('/keys');
  const [created, setCreated] = useState<KeyCreated>();
  const [actionError, setActionError] = useState<ApiError>();
  const act = async (key: KeyView, action: 'disable' | 'enable' | 'revoke') => {
    if (action === 'revoke' && !window.confirm(`Revoke the key of ${key.app}? This cannot be undone.`)) return;
    setActionError(undefined);
    try {
      await api(`/keys/${key.id}/${action}`, {});
    } catch (e) {
      setActionError(e as ApiError);
    }
    reload();
  };
  return (
    <section>
      <h1>API keys</h1>
      {created ? (
        <Secret created={created} onDone={() => setCreated(undefined)} />
      ) : (
        <NewKey
          onCreated={(key) => {
            setCreated(key);
            reload();
          }}
        />
      )}
      {actionError && <Failure error={actionError} />}
      {!data ? (
        error ? <Failure error={error} retry={reload} /> : <Loading />
      ) : (
        <Table
          label="API keys"
          rows={data.keys}
          rowKey={(k) => k.id}
          empty="No API keys yet: create one above."
          initialSort={{ column: 3, descending: true }}
          columns={[
            {
              label: 'App',
              sort: (k) => k.app,
              render: (k) => (
                <>
                  <strong>{k.app}</strong> <code class="subtle">{k.appId}</code>
                  {k.allApps && <> <span class="badge badge-pending">all apps</span></>}
                  <br />
                  <code class="subtle">{k.id}</code>
                </>
              ),
            },
            { label: 'Permissions', render: (k) => <span class="grant-list">{k.permissions.map((p) => <code>{p}</code>)}</span> },
            { label: 'State', sort: (k) => k.status, render: (k) => <Badge status={k.status} /> },
            { label: 'Created', sort: (k) => k.created, render: (k) => when(k.created) },
            { label: 'Expires', sort: (k) => k.expires ?? '9999', render: (k) => (k.expires ? when(k.expires) : 'never') },
            { label: 'Last used', sort: (k) => k.lastUsed ?? '', render: (k) => (k.lastUsed ? <span title={when(k.lastUsed)}>{ago(k.lastUsed)}</span> : 'never') },
            {
              label: 'Actions',
              render: (k) =>
                k.status === 'revoked' ? (
                  <span class="subtle">—</span>
                ) : (
                  <span class="actions">
                    {k.status === 'disabled' ? <button type="button" onClick={() => act(k, 'enable')}>Enable</button> : <button type="button" onClick={() => act(k, 'disable')}>Disable</button>}
                    <button type="button" class="danger" onClick={() => act(k, 'revoke')}>Revoke</button>
                  </span>
                ),
            },
          ]}
        />
      )}
    </section>
  );
}
