// The apiKey option, checked once when a client is made. The service issues `cbk_` and 20 random
// bytes in base64url; nothing else can be a key it accepts, and a value with control characters
// would make fetch fail on every call with a message that quotes it. A wrong key is described
// (missing, a line break at its end, its length), never repeated: messages end up in logs.

const API_KEY = /^cbk_[A-Za-z0-9_-]{27}$/;
const API_KEY_LENGTH = 31;
const PREFIX = 'cbk_';

/** The key itself when it has the form `keys create` gives; a TypeError saying what is wrong otherwise. */
export function checkApiKey(value: unknown): string {
  if (typeof value === 'string' && API_KEY.test(value)) return value;
  throw new TypeError(`apiKey: not a key issued by \`keys create\` (${PREFIX} and 27 characters of A-Z a-z 0-9 _ -): ${flawOf(value)}`);
}

function flawOf(value: unknown): string {
  if (typeof value !== 'string') return value === undefined ? 'it is missing' : `it is ${value === null ? 'null' : `a ${typeof value}`}`;
  if (/[\r\n]$/.test(value)) return 'it ends with a line break';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: it names a key's control characters
  if (/[\x00-\x1f\x7f]/.test(value)) return 'it holds control characters';
  if (value.trim() !== value) return 'it has spaces around it';
  if (!value.startsWith(PREFIX)) return `it does not start with ${PREFIX}`;
  if (value.length !== API_KEY_LENGTH) return `it has ${value.length} characters instead of ${API_KEY_LENGTH}`;
  return 'it holds other characters';
}
