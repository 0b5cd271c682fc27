// Time formats of the spec. Every instant inside the service is an ISO-8601 UTC string; the
// spec's answer form is `YYYY-MM-DD HH:MM:SS.mmmZ` and its input form `YYYY-MM-DD HH:MM:SS`.

const INPUT_FORM = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/**
 * Parses the spec's input form as UTC and returns an ISO string, or null when the text is not in
 * that form or names an instant that does not exist (2025-02-30, 24:00:00, …).
 */
export function parseSpecDateTime(text: string): string | null {
  const m = INPUT_FORM.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  const date = new Date(ms);
  // Date.UTC rolls 2025-02-30 over to March: a round trip that changes a field means it was impossible.
  if (
    date.getUTCFullYear() !== y ||
    date.getUTCMonth() !== mo - 1 ||
    date.getUTCDate() !== d ||
    date.getUTCHours() !== h ||
    date.getUTCMinutes() !== mi ||
    date.getUTCSeconds() !== s
  ) {
    return null;
  }
  return date.toISOString();
}

/** ISO instant → `YYYY-MM-DD HH:MM:SS.mmmZ`. */
export function toSpecTimestamp(iso: string): string {
  return iso.replace('T', ' ');
}
