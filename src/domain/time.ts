// Time formats of the spec. Every instant inside the service is an ISO-8601 UTC string; the
// spec's answer form is `YYYY-MM-DD HH:MM:SS.mmmZ` and its input form `YYYY-MM-DD HH:MM:SS`.

const INPUT_FORM = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/** The number written by the two digits at `at` (the form was checked: they are digits). */
const twoDigits = (text: string, at: number) => (text.charCodeAt(at) - 48) * 10 + text.charCodeAt(at + 1) - 48;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);

/**
 * Parses the spec's input form as UTC and returns an ISO string, or null when the text is not in
 * that form or names an instant that does not exist (2025-02-30, 24:00:00, …). Years before 100
 * are refused: an instant there is no expiry anyone means. Checked field by field, with no Date:
 * every VIP submission's expiry comes through here.
 */
export function parseSpecDateTime(text: string): string | null {
  if (!INPUT_FORM.test(text)) return null;
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  if (year < 100 || month < 1 || month > 12 || day < 1) return null;
  if (day > (month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!)) return null;
  if (twoDigits(text, 11) > 23 || twoDigits(text, 14) > 59 || twoDigits(text, 17) > 59) return null;
  return `${text.slice(0, 10)}T${text.slice(11)}.000Z`;
}

/** ISO instant → `YYYY-MM-DD HH:MM:SS.mmmZ`. */
export function toSpecTimestamp(iso: string): string {
  return iso.replace('T', ' ');
}
