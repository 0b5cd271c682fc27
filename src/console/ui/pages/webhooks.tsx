// Webhooks: a tab per app with its endpoints, a notice for every endpoint disabled because it kept
// failing, a new endpoint for the app (its signing secret shown once); and one endpoint's page:
// its latest attempts, each event with a "Send again" button, and disable, enable, rotate, delete.
import type { TargetedEvent } from 'preact';
import { useState } from 'preact/hooks';
import type { WebhookAttemptView, WebhookChanged, WebhookDetail, WebhookEndpointView, WebhookPage } from '../../../contract/console.js';
import { WEBHOOK_EVENT_TYPES } from '../../../domain/events.js';
import { api, type ApiError } from '../api.js';
import { when } from '../format.js';
import { useApi } from '../hooks.js';
import { SecretShown } from '../secret.js';
import { Badge, Failure, Loading } from '../states.js';
import { Table } from '../table.js';

const SECRET_NOTE = 'This is the only time the signing secret is shown; the service keeps it sealed. Receivers verify Bridge-Signature with it. Copy it now.';

/** The endpoints disabled because every delivery failed for the whole retry period. */
function FailingNotice({ endpoints }: { endpoints: readonly WebhookEndpointView[] }) {
  const failing = endpoints.filter((e) => e.disabled?.reason === 'failing');
  if (failing.length === 0) return null;
  return (
    <div class="panel card-alert" role="alert">
      <h2>Disabled for failing</h2>
      <p>These endpoints answered nothing but failures for the whole retry period and were disabled. Enable each once its receiver answers again.</p>
      <ul>
        {failing.map((e) => (
          <li key={e.id}>
            <a href={`#/webhooks/${e.id}`}>{e.url}</a> ({e.appId}): {e.disabled?.detail}
          </li>
        ))}
      </ul>
    </div>
  );
}

function NewEndpoint({ appId, onCreated }: { appId: string; onCreated(changed: WebhookChanged): void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['client.signed_in']);
  const [description, setDescription] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const toggle = (type: string) => setEvents(events.includes(type) ? events.filter((t) => t !== type) : [...events, type]);
  const submit = async (event: TargetedEvent<HTMLFormElement>) => {
    event.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      onCreated(await api<WebhookChanged>('/webhooks', { body: { appId, url, events, description } }));
      setUrl('');
      setDescription('');
    } catch (e) {
      setError(e as ApiError);
    } finally {
      setBusy(false);
    }
  };
  const invalid = (field: string) => error?.field?.split('.')[0] === field;
  return (
    <form class="panel" onSubmit={submit} aria-label="New endpoint" noValidate>
      <h2>New endpoint for {appId}</h2>
      <label>
        URL
        <input name="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://game.example/bridge-webhook" aria-invalid={invalid('url')} required />
        <small class="subtle">https (http only to a loopback address, for development)</small>
      </label>
      <fieldset aria-invalid={invalid('events')}>
        <legend>Events</legend>
        <div class="grants">
          {WEBHOOK_EVENT_TYPES.map((type) => (
            <label class="check">
              <input type="checkbox" name="event" value={type} checked={events.includes(type)} onChange={() => toggle(type)} />
              <code>{type}</code>
            </label>
          ))}
        </div>
      </fieldset>
      <label>
        Description (optional)
        <input name="description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} placeholder="lobby server" />
      </label>
      {error && <Failure error={error} />}
      <button type="submit" class="primary" disabled={busy}>
        Add endpoint
      </button>
    </form>
  );
}

const status = (e: WebhookEndpointView) => (e.disabled?.reason === 'failing' ? 'failing' : e.status);

export function WebhooksPage({ app }: { app: string | undefined }) {
  const { data, error, reload } = useApi<WebhookPage>('/webhooks');
  const [created, setCreated] = useState<WebhookChanged>();
  if (!data) return error ? <Failure error={error} retry={reload} /> : <Loading />;
  const appIds = [...new Set([...data.apps.map((a) => a.appId), ...data.endpoints.map((e) => e.appId)])].sort();
  const current = app && appIds.includes(app) ? app : appIds[0];
  const endpoints = data.endpoints.filter((e) => e.appId === current);
  return (
    <section>
      <h1>Webhooks</h1>
      <FailingNotice endpoints={data.endpoints} />
      {appIds.length === 0 ? (
        <p class="empty">No apps yet: an app exists once it has a key.</p>
      ) : (
        <>
          <nav class="actions tabs" aria-label="Apps">
            {appIds.map((appId) => (
              <a class="button-tab" href={`#/webhooks?app=${encodeURIComponent(appId)}`} aria-current={appId === current ? 'page' : undefined}>
                {appId} <span class="subtle">({data.endpoints.filter((e) => e.appId === appId).length})</span>
              </a>
            ))}
          </nav>
          {created?.secret && created.endpoint ? (
            <SecretShown title={`Endpoint added for ${created.endpoint.appId}`} note={SECRET_NOTE} secret={created.secret} onDone={() => setCreated(undefined)} />
          ) : (
            current && (
              <NewEndpoint
                appId={current}
                onCreated={(changed) => {
                  setCreated(changed);
                  reload();
                }}
              />
            )
          )}
          <Table
            label={`Endpoints of ${current}`}
            rows={endpoints}
            rowKey={(e) => e.id}
            empty="No endpoints for this app yet: add one above."
            columns={[
              {
                label: 'Endpoint',
                sort: (e) => e.url,
                render: (e) => (
                  <>
                    <a href={`#/webhooks/${e.id}`}>{e.url}</a>
                    {e.description && <span class="subtle"> — {e.description}</span>}
                    <br />
                    <code class="subtle">{e.id}</code>
                  </>
                ),
              },
              {
                label: 'Events',
                render: (e) => (
                  <span class="grant-list">
                    {e.events.map((t) => (
                      <code>{t}</code>
                    ))}
                  </span>
                ),
              },
              { label: 'State', sort: status, render: (e) => <Badge status={status(e)} /> },
              { label: 'Pending', sort: (e) => e.pending, className: 'num', render: (e) => e.pending },
              { label: 'Last delivered', sort: (e) => e.lastDelivered ?? '', render: (e) => when(e.lastDelivered) },
              { label: 'Last failure', render: (e) => (e.lastFailed ? `${e.lastFailed.why}, ${when(e.lastFailed.at)}` : '—') },
            ]}
          />
        </>
      )}
    </section>
  );
}

function AttemptResult({ attempt }: { attempt: WebhookAttemptView }) {
  const badge = attempt.result === 'delivered' ? 'applied' : attempt.result === 'failed' ? 'failed' : 'pending';
  return (
    <>
      <span class={`badge badge-${badge}`}>{attempt.result}</span>
      {attempt.status !== undefined && ` HTTP ${attempt.status}`}
      {attempt.error && <div class="subtle">{attempt.error}</div>}
    </>
  );
}

export function WebhookEndpointPage({ id }: { id: string }) {
  const { data, error, reload } = useApi<WebhookDetail>(`/webhooks/${id}`, 5000);
  const [actionError, setActionError] = useState<ApiError>();
  const [notice, setNotice] = useState<string>();
  const [rotated, setRotated] = useState<string>();
  if (!data) return error ? <Failure error={error} retry={reload} /> : <Loading />;
  const { endpoint, attempts } = data;
  const act = async (action: 'disable' | 'enable' | 'rotate' | 'delete') => {
    if (action === 'delete' && !window.confirm(`Delete the endpoint ${endpoint.url}? Nothing more is sent to it.`)) return;
    if (action === 'rotate' && !window.confirm('Rotate the signing secret? The previous one still signs for the overlap.')) return;
    setActionError(undefined);
    try {
      const changed = await api<WebhookChanged>(`/webhooks/${id}/${action}`, {});
      if (changed.deleted) return location.assign(`#/webhooks?app=${encodeURIComponent(endpoint.appId)}`);
      if (changed.secret) setRotated(changed.secret);
    } catch (e) {
      setActionError(e as ApiError);
    }
    reload();
  };
  const resend = async (attempt: WebhookAttemptView) => {
    setActionError(undefined);
    setNotice(undefined);
    try {
      await api(`/webhooks/${id}/events/${attempt.eventId}/resend`, {});
      setNotice(`${attempt.eventId} goes out again now.`);
    } catch (e) {
      setActionError(e as ApiError);
    }
    reload();
  };
  return (
    <section>
      <p>
        <a href={`#/webhooks?app=${encodeURIComponent(endpoint.appId)}`}>← Webhooks of {endpoint.appId}</a>
      </p>
      <h1 class="name">{endpoint.url}</h1>
      <p class="subtle">
        <code>{endpoint.id}</code> · {endpoint.description || 'no description'} · added {when(endpoint.created)}
      </p>
      {endpoint.disabled && (
        <div class={endpoint.disabled.reason === 'failing' ? 'panel card-alert' : 'panel'} role={endpoint.disabled.reason === 'failing' ? 'alert' : 'status'}>
          <strong>Disabled {when(endpoint.disabled.at)}</strong>{' '}
          {endpoint.disabled.reason === 'failing'
            ? `because it kept failing: ${endpoint.disabled.detail}. Enable it once its receiver answers again.`
            : 'on request. Nothing is sent to it until it is enabled.'}
        </div>
      )}
      {rotated && (
        <SecretShown
          title="New signing secret"
          note={`${SECRET_NOTE} The previous secret still signs until ${when(endpoint.previousSecretValidUntil)}.`}
          secret={rotated}
          onDone={() => setRotated(undefined)}
        />
      )}
      <dl class="panel">
        <dt>State</dt>
        <dd>
          <Badge status={status(endpoint)} /> {endpoint.pending} pending
        </dd>
        <dt>Events</dt>
        <dd class="grant-list">
          {endpoint.events.map((t) => (
            <code>{t}</code>
          ))}
        </dd>
        <dt>Last delivered</dt>
        <dd>{when(endpoint.lastDelivered)}</dd>
        {endpoint.previousSecretValidUntil && (
          <>
            <dt>Previous secret</dt>
            <dd>signs too until {when(endpoint.previousSecretValidUntil)}</dd>
          </>
        )}
      </dl>
      <div class="actions">
        {endpoint.status === 'disabled' ? (
          <button type="button" class="primary" onClick={() => act('enable')}>
            Enable
          </button>
        ) : (
          <button type="button" onClick={() => act('disable')}>
            Disable
          </button>
        )}
        <button type="button" onClick={() => act('rotate')}>
          Rotate secret
        </button>
        <button type="button" class="danger" onClick={() => act('delete')}>
          Delete
        </button>
      </div>
      {actionError && <Failure error={actionError} />}
      {notice && (
        <p class="success" role="status">
          {notice}
        </p>
      )}
      <h2>Attempts</h2>
      <Table
        label="Attempts"
        rows={attempts}
        rowKey={(a) => `${a.deliveryId}#${a.attempt}`}
        empty="No attempts yet."
        columns={[
          { label: 'Started', sort: (a) => a.started, render: (a) => when(a.started) },
          {
            label: 'Event',
            sort: (a) => a.eventId,
            render: (a) => (
              <>
                <code>{a.eventId}</code> <span class="subtle">{a.type}</span>
              </>
            ),
          },
          { label: 'Attempt', className: 'num', render: (a) => a.attempt },
          { label: 'Node', render: (a) => a.node },
          { label: 'Result', sort: (a) => a.result, render: (a) => <AttemptResult attempt={a} /> },
          { label: 'ms', className: 'num', render: (a) => a.durationMs ?? '—' },
          { label: 'Next attempt', render: (a) => (a.retryAt ? when(a.retryAt) : a.result === 'failed' ? 'given up' : '—') },
          { label: 'Answer', render: (a) => (a.response ? <code class="subtle">{a.response.slice(0, 120)}</code> : '—') },
          {
            label: 'Actions',
            render: (a) =>
              a.result === 'sending' ? (
                <span class="subtle">—</span>
              ) : (
                <button type="button" onClick={() => resend(a)} disabled={endpoint.status !== 'enabled'}>
                  Send again
                </button>
              ),
          },
        ]}
      />
    </section>
  );
}
