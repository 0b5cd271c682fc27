// Operations whose outcome is unknown, oldest first, with everything the log knows; each resolved
// as applied or not applied, with a note, by an operator who checked the platform.
import { useState } from 'preact/hooks';
import type { OperationList, OperationView } from '../../../contract/console.js';
import { operationMatches } from '../../../domain/operation.js';
import { api, type ApiError } from '../api.js';
import { fields, when } from '../format.js';
import { useApi } from '../hooks.js';
import { Failure, Loading } from '../states.js';

function Resolve({ op, onResolved }: { op: OperationView; onResolved(): void }) {
  const [applied, setApplied] = useState<boolean>();
  const [note, setNote] = useState('');
  const [error, setError] = useState<ApiError>();
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      await api(`/operations/${op.operationId}/resolve`, { body: { applied, note } });
      onResolved();
    } catch (e) {
      setError(e as ApiError);
    }
  };
  return (
    <form class="resolve" onSubmit={submit} aria-label={`Resolve ${op.operationId}`}>
      <fieldset>
        <legend>What does the platform show?</legend>
        <label class="check">
          <input type="radio" name={`applied-${op.operationId}`} value="true" checked={applied === true} onChange={() => setApplied(true)} /> Applied
        </label>
        <label class="check">
          <input type="radio" name={`applied-${op.operationId}`} value="false" checked={applied === false} onChange={() => setApplied(false)} /> Not applied
        </label>
      </fieldset>
      <label>
        Note
        <input name="note" value={note} onInput={(e) => setNote(e.currentTarget.value)} placeholder="what you checked, e.g. the user's points ledger" />
      </label>
      {error && <Failure error={error} />}
      <button type="submit" class="primary" disabled={applied === undefined}>
        Resolve
      </button>
    </form>
  );
}

/** Resolutions the platform contradicted afterwards: the resolution stands; an operator reviews. */
function Conflicts() {
  const { data } = useApi<OperationList>('/operations/conflicts');
  if (!data || data.operations.length === 0) return null;
  return (
    <section>
      <h2>Answered after the resolution</h2>
      <p class="subtle">The platform answered these after someone had resolved them. The resolution stands; check the user and settle the difference by hand.</p>
      {data.operations.map((op) => (
        <article class="panel operation" key={op.operationId}>
          <h3>
            {op.kind.replace('Requested', '')} for <a href={`#/users/${op.oId}`}>{op.userName}</a> <code class="subtle">{op.operationId}</code>
          </h3>
          <dl>
            <dt>Resolved as</dt>
            <dd>
              {op.resolution?.applied ? 'applied' : 'not applied'} by {op.resolution?.by.name ?? op.resolution?.by.appId}, {when(op.resolution?.at)}
            </dd>
            <dt>The platform said</dt>
            <dd>
              {op.answeredAfterResolution?.answer.replace(/^Operation/, '')}: {op.answeredAfterResolution?.detail}, {when(op.answeredAfterResolution?.at)}
            </dd>
          </dl>
        </article>
      ))}
    </section>
  );
}

export function UnknownPage() {
  const { data, error, reload } = useApi<OperationList>('/operations/unknown');
  const [search, setSearch] = useState('');
  if (!data) return error ? <Failure error={error} retry={reload} /> : <Loading />;
  const text = search.trim();
  const shown = text ? data.operations.filter((op) => operationMatches(op, text)) : data.operations;
  return (
    <section>
      <h1>Unknown outcomes</h1>
      <p class="subtle">Sent to the platform, then no trustworthy answer: check the platform, then record what it shows. Oldest first.</p>
      <label class="search">
        Find
        <input
          type="search"
          name="search"
          value={search}
          onInput={(e) => setSearch(e.currentTarget.value)}
          placeholder="the caller's Idempotency-Key, X-Request-Id or operation id"
        />
      </label>
      {data.operations.length === 0 && <p class="empty">No operation waits for a resolution.</p>}
      {data.operations.length > 0 && shown.length === 0 && <p class="empty">No unknown outcome matches “{text}”.</p>}
      {shown.map((op) => (
        <article class="panel operation" key={op.operationId}>
          <h2>
            {op.kind.replace('Requested', '')} for <a href={`#/users/${op.oId}`}>{op.userName}</a> <code class="subtle">{op.operationId}</code>
          </h2>
          <dl>
            <dt>Request</dt>
            <dd>{fields(op.request)}</dd>
            <dt>Requested</dt>
            <dd>
              {when(op.requestedAt)}, log position #{op.position}
            </dd>
            <dt>By</dt>
            <dd>
              app <code>{op.appId}</code>, key <code>{op.keyId}</code>
            </dd>
            <dt>Node</dt>
            <dd>{op.node ?? 'not recorded'}</dd>
            <dt>Idempotency-Key</dt>
            <dd>
              {op.idempotencyKey ? <code>{op.idempotencyKey}</code> : op.claim ? 'sent (not recorded before this version)' : 'none'}
              {op.claim && <code class="subtle"> {op.claim}</code>}
            </dd>
            <dt>Request id</dt>
            <dd>{op.requestId ? <code>{op.requestId}</code> : 'not recorded'}</dd>
            <dt>Why unknown</dt>
            <dd>{op.unknownReason ?? op.outcome?.detail}</dd>
            <dt>Unknown since</dt>
            <dd>{when(op.outcome?.at)}</dd>
          </dl>
          <Resolve op={op} onResolved={reload} />
        </article>
      ))}
      <Conflicts />
    </section>
  );
}
