// Verifying the `Bridge-Signature` header of a webhook the service sends:
// `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body bytes>")>`, with one `v1=` per valid
// secret while a secret is being rotated. A message is authentic when any `v1` is the one made with
// your secret (WebCrypto's verify compares in constant time) and `t` is within the tolerance of
// now, which bounds how long a captured message can be replayed. WebCrypto, so no Node-only import.

export const SIGNATURE_HEADER = 'Bridge-Signature';
export const DEFAULT_TOLERANCE_SECONDS = 300;
/** Longer headers are refused unread: 8 KiB holds over a hundred signatures. */
export const MAX_SIGNATURE_HEADER_LENGTH = 8192;

const TIMESTAMP = /^\d{1,15}$/;
const V1 = /^[0-9a-f]{64}$/;

/**
 * `malformed_header`: no `t`, no well-formed `v1`, or too long. `signature_mismatch`: no `v1` is the
 * one made with this secret over this body (another secret, or a changed body).
 * `timestamp_out_of_tolerance`: authentic, but older or newer than the tolerance allows (a replay,
 * or a skewed clock).
 */
export type WebhookSignatureFailure = 'malformed_header' | 'signature_mismatch' | 'timestamp_out_of_tolerance';

export class WebhookSignatureError extends Error {
  override readonly name = 'WebhookSignatureError';
  readonly reason: WebhookSignatureFailure;

  constructor(reason: WebhookSignatureFailure, message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface VerifyWebhookOptions {
  /** How far `t` may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Now, in unix seconds (default: the system clock). */
  now?: number;
}

/**
 * Checks a webhook's `Bridge-Signature` header against its raw body; resolves to its timestamp `t`
 * (unix seconds), or rejects with a WebhookSignatureError whose `reason` says what failed.
 * `payload` is the body exactly as received, before any JSON parsing: its bytes, or its text when
 * the body was read as text unchanged (encoded again as UTF-8). A re-serialized body does not match.
 */
export async function verifyWebhookSignature(
  payload: Uint8Array | ArrayBuffer | string,
  header: string | null | undefined,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<number> {
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (typeof tolerance !== 'number' || !(tolerance >= 0)) throw new TypeError('toleranceSeconds: must be a number of seconds, 0 or more');
  if (typeof secret !== 'string' || secret === '') throw new TypeError('secret: must be a non-empty string');
  const body = bytesOf(payload);
  const { timestamp, signatures } = parse(header);
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const signed = concat(encoder.encode(`${timestamp}.`), body);
  // Every candidate is checked, so the time taken does not tell which one matched.
  const verdicts = await Promise.all(signatures.map((signature) => crypto.subtle.verify('HMAC', key, hexBytes(signature), signed)));
  if (!verdicts.includes(true)) throw new WebhookSignatureError('signature_mismatch', `${SIGNATURE_HEADER}: no v1 signature matches this body and secret`);
  const now = options.now ?? Date.now() / 1000;
  if (Math.abs(now - timestamp) > tolerance) {
    throw new WebhookSignatureError('timestamp_out_of_tolerance', `${SIGNATURE_HEADER}: t is ${Math.round(now - timestamp)} s from now, beyond the tolerance of ${tolerance} s`);
  }
  return timestamp;
}

function parse(header: string | null | undefined): { timestamp: number; signatures: string[] } {
  if (typeof header !== 'string' || header.length > MAX_SIGNATURE_HEADER_LENGTH) {
    throw new WebhookSignatureError('malformed_header', `${SIGNATURE_HEADER}: missing, or longer than ${MAX_SIGNATURE_HEADER_LENGTH} characters`);
  }
  const timestamps: string[] = [];
  const signatures: string[] = [];
  for (const element of header.split(',')) {
    const trimmed = element.trim();
    const equals = trimmed.indexOf('=');
    if (equals < 0) continue;
    const [name, value] = [trimmed.slice(0, equals), trimmed.slice(equals + 1)];
    if (name === 't') timestamps.push(value);
    else if (name === 'v1' && V1.test(value)) signatures.push(value);
  }
  if (timestamps.length !== 1 || !TIMESTAMP.test(timestamps[0]!)) throw new WebhookSignatureError('malformed_header', `${SIGNATURE_HEADER}: must carry one t=<unix seconds>`);
  if (signatures.length === 0) throw new WebhookSignatureError('malformed_header', `${SIGNATURE_HEADER}: carries no v1=<64 lowercase hex digits>`);
  return { timestamp: Number(timestamps[0]), signatures };
}

function bytesOf(payload: Uint8Array | ArrayBuffer | string): Uint8Array<ArrayBuffer> {
  if (typeof payload === 'string') return new TextEncoder().encode(payload);
  if (payload instanceof ArrayBuffer) return new Uint8Array(payload.slice(0));
  if (payload instanceof Uint8Array) return new Uint8Array(payload);
  throw new TypeError('payload: must be the raw body as received (bytes, or its unchanged text)');
}

function concat(head: Uint8Array, tail: Uint8Array): Uint8Array<ArrayBuffer> {
  const joined = new Uint8Array(head.length + tail.length);
  joined.set(head);
  joined.set(tail, head.length);
  return joined;
}

function hexBytes(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}
