// What a page shows while it loads, when it failed, and the status of a record.
import type { ApiError } from './api.js';

export const Loading = () => <p class="loading">Loading…</p>;

export function Failure({ error, retry }: { error: ApiError; retry?: () => void }) {
  return (
    <div class="error" role="alert">
      <strong>{error.status ? `Error ${error.status}` : 'Unreachable'}</strong> {error.message}
      {retry && (
        <button type="button" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export const Badge = ({ status }: { status: string }) => <span class={`badge badge-${status}`}>{status}</span>;
