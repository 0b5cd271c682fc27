// API keys: the list, a new key (checked before it is sent; its secret shown once, with a copy
// button), and the changes an operator makes to a key.
import type { TargetedEvent } from 'preact';
import { useState } from 'preact/hooks';
import type { KeyCreated, KeyList, KeyView } from '../../../contract/console.js';
import { PERMISSIONS } from '../../../domain/permissions.js';
import { api, type ApiError } from '../api.js';
import { ago, when } from '../format.js';
import { useApi } from '../hooks.js';
import { EMPTY_KEY_FORM, FIELD_LABELS, keyBody, keyFormProblems, problemText, type KeyField, type KeyForm, type KeyProblems } from '../keyForm.js';
import { Badge, Failure, Loading } from '../states.js';
import { SecretShown } from '../secret.js';
import { Table } from '../table.js';

/** A field's problem, under it, naming it; the field points to it (aria-describedby). */
function Problem({ field, problems }: { field: KeyField; problems: KeyProblems }) {
  const problem = problems[field];
  return problem ? (
    <small class="problem" id={`${field}-problem`}>
      {problemText(field, problem)}
    </small>
  ) : null;
}

/** The element a field's problem sends the focus to. */
const INPUT_NAMES: Record<KeyField, string> = { appId: 'appId', app: 'app', permissions: 'permission', expires: 'expires' };

function NewKey({ onCreated }: { onCreated(created: KeyCreated): void }) {
  const [form, setForm] = useState<KeyForm>(EMPTY_KEY_FORM);
  // Once the form was submitted, its problems follow each edit.
  const [submitted, setSubmitted] = useState(false);
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const problems = submitted ? keyFormProblems(form) : {};
  const edit = (change: Partial<KeyForm>) => setForm((f) => ({ ...f, ...change }));
  const toggle = (grant: string) => edit({ permissions: form.permissions.includes(grant) ? form.permissions.filter((x) => x !== grant) : [...form.permissions, grant] });
  const invalid = (field: KeyField) => problems[field] !== undefined || error?.field?.split('.')[0] === field;
  const describedBy = (field: KeyField) => (problems[field] ? `${field}-problem` : undefined);
  /** A labelled text input of the form, its problem under it, then a hint if any. */
  const textField = (field: 'appId' | 'app' | 'expires', label: string, placeholder: string, options: { hint?: string; required?: boolean } = {}) => (
    <label>
      {label}
      <input
        name={INPUT_NAMES[field]}
        value={form[field]}
        onInput={(e) => edit({ [field]: e.currentTarget.value })}
        placeholder={placeholder}
        aria-invalid={invalid(field)}
        aria-describedby={describedBy(field)}
        required={options.required}
      />
      <Problem field={field} problems={problems} />
      {options.hint && <small class="subtle">{options.hint}</small>}
    </label>
  );
  const submit = async (event: TargetedEvent<HTMLFormElement>) => {
    event.preventDefault();
    const element = event.currentTarget;
    setSubmitted(true);
    setError(undefined);
    const found = keyFormProblems(form);
    const first = (Object.keys(FIELD_LABELS) as KeyField[]).find((field) => found[field] !== undefined);
    if (first) return element.querySelector<HTMLElement>(`[name="${INPUT_NAMES[first]}"]`)?.focus();
    setBusy(true);
    try {
      onCreated(await api<KeyCreated>('/keys', { body: keyBody(form) }));
      setForm(EMPTY_KEY_FORM);
      setSubmitted(false);
    } catch (e) {
      setError(e as ApiError);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel" onSubmit={submit} aria-label="New key" noValidate>
      <h2>New key</h2>
      {textField('appId', 'App id', 'my-game', { hint: "a-z 0-9 _ . - ; an existing app's id adds a key to it", required: true })}
      {textField('app', 'App name (a new app)', 'My Game')}
      <label class="check">
        <input type="checkbox" name="allApps" checked={form.allApps} onChange={() => edit({ allApps: !form.allApps })} /> Reaches every app's records (auditors, operators)
      </label>
      <fieldset aria-invalid={invalid('permissions')} aria-describedby={describedBy('permissions')}>
        <legend>Permissions</legend>
        <div class="grants">
          {['*', ...PERMISSIONS].map((grant) => (
            <label class="check">
              <input type="checkbox" name="permission" value={grant} checked={form.permissions.includes(grant)} onChange={() => toggle(grant)} />
              <code>{grant === '*' ? '* (all)' : grant}</code>
            </label>
          ))}
        </div>
        <Problem field="permissions" problems={problems} />
      </fieldset>
      {textField('expires', 'Expires (UTC, optional)', '2027-01-01 00:00:00')}
      {error && <Failure error={error} />}
      <button type="submit" class="primary" disabled={busy}>
        Create key
      </button>
    </form>
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
        <SecretShown
          title={`Key created for ${created.key.app}`}
          note="This is the only time the key is shown; only its hash is stored. Copy it now."
          secret={created.secret}
          onDone={() => setCreated(undefined)}
        />
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
        error ? (
          <Failure error={error} retry={reload} />
        ) : (
          <Loading />
        )
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
                  {k.allApps && (
                    <>
                      {' '}
                      <span class="badge badge-pending">all apps</span>
                    </>
                  )}
                  <br />
                  <code class="subtle">{k.id}</code>
                </>
              ),
            },
            {
              label: 'Permissions',
              render: (k) => (
                <span class="grant-list">
                  {k.permissions.map((p) => (
                    <code>{p}</code>
                  ))}
                </span>
              ),
            },
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
                    {k.status === 'disabled' ? (
                      <button type="button" onClick={() => act(k, 'enable')}>
                        Enable
                      </button>
                    ) : (
                      <button type="button" onClick={() => act(k, 'disable')}>
                        Disable
                      </button>
                    )}
                    <button type="button" class="danger" onClick={() => act(k, 'revoke')}>
                      Revoke
                    </button>
                  </span>
                ),
            },
          ]}
        />
      )}
    </section>
  );
}
