// The signature every webhook request carries (docs/api.md, "Webhook signatures"):
// `Bridge-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, one `v1=`
// per secret that signs (the new one first while a rotated one still does). The key is the secret
// exactly as shown at registration, `whsec_` included.
import { createHmac } from 'node:crypto';
import { secureRandomBytes } from '../system/ids.js';

export const SIGNATURE_HEADER = 'Bridge-Signature';
export const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: 256 bits from the CSPRNG. */
export const newWebhookSecret = () => SECRET_PREFIX + secureRandomBytes(32).toString('base64url');

export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  const signed = `${timestamp}.${body}`;
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${createHmac('sha256', secret).update(signed).digest('hex')}`)].join(',');
}
