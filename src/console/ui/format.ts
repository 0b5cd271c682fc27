// How times and values read in the console: every time in UTC, to the second, and saying so, as
// the rest of the service writes them.

/** `2026-11-26 13:05:52 UTC`; `—` for no time. The one way the console shows an instant. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const time = new Date(iso);
  if (Number.isNaN(time.getTime())) return iso;
  const text = time.toISOString();
  return `${text.slice(0, 10)} ${text.slice(11, 19)} UTC`;
}

export function ago(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}

export const json = (value: unknown) => JSON.stringify(value, null, 2);

/** A request's fields in one line: `point: 5 · memo: quest`. */
export const fields = (value: Record<string, unknown>) =>
  Object.entries(value)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' · ');
