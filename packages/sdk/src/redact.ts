// Keeps the apiKey out of errors, which end up in logs: what an answer or a failure says is
// cleaned of it before it becomes part of one. The key is checked at construction to be
// [A-Za-z0-9_-] only, so it needs no escaping in a pattern or in JSON; it is matched in any case
// because a URL's host, where a hostile answer could put it, is lower-cased.

const MASK = 'cbk_[redacted]';
/** How far into an error's causes, and how many values in all, `mentions` looks. */
const MAX_DEPTH = 6;
const MAX_VALUES = 200;

export interface Redactor {
  text(value: string): string;
  /** A parsed JSON value with the key masked wherever it appears (names and strings). */
  json(value: unknown): unknown;
  /** Whether an error mentions the key: its message, stack, causes or other fields. */
  mentions(error: unknown): boolean;
}

export function createRedactor(apiKey: string): Redactor {
  const pattern = new RegExp(apiKey, 'gi');
  const has = (text: string) => text.toLowerCase().includes(apiKey.toLowerCase());
  return {
    text: (value) => value.replace(pattern, MASK),
    json: (value) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value).replace(pattern, MASK))),
    mentions: (error) => mentions(error, has),
  };
}

function mentions(root: unknown, has: (text: string) => boolean): boolean {
  const seen = new Set<object>();
  const visit = (value: unknown, depth: number): boolean => {
    if (typeof value === 'string') return has(value);
    if (typeof value !== 'object' || value === null) return has(String(value));
    if (seen.has(value) || depth > MAX_DEPTH || seen.size >= MAX_VALUES) return false;
    seen.add(value);
    // Every own field, enumerable or not (an Error's message, stack, cause, an AggregateError's
    // errors), and an Error's message and stack also when its class defines them elsewhere.
    const record = value as Record<string, unknown>;
    const fields = Object.getOwnPropertyNames(value).map((name) => record[name]);
    if (value instanceof Error) fields.push(value.message, value.stack);
    return fields.some((field) => field !== undefined && visit(field, depth + 1));
  };
  try {
    return visit(root, 0);
  } catch {
    // A getter that throws, or a value that cannot be turned into text: assume the worst.
    return true;
  }
}
