// Secrets the service must read back (a webhook endpoint's signing secret) are kept in the log
// sealed: AES-256-GCM under a key derived (HKDF-SHA256) from the session secret for one purpose,
// with what the secret belongs to as associated data, so a sealed value copied to another record
// does not open there. Someone with the log alone learns nothing of the secret.
import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto';
import { secureRandomBytes } from './ids.js';

const VERSION = 'v1';

export class SecretBox {
  private readonly key: Buffer;

  constructor(rootSecret: Buffer, purpose: string) {
    this.key = Buffer.from(hkdfSync('sha256', rootSecret, 'community-bridge', purpose, 32));
  }

  /** `v1.<iv>.<ciphertext+tag>` (base64url), bound to `owner`. */
  seal(plain: string, owner: string): string {
    const iv = secureRandomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(owner, 'utf8'));
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
  }

  /** The clear value; undefined when it was sealed under another key or for another owner. */
  open(sealed: string, owner: string): string | undefined {
    const [version, iv, body] = sealed.split('.');
    if (version !== VERSION || !iv || !body) return undefined;
    const bytes = Buffer.from(body, 'base64url');
    if (bytes.length < 16) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(owner, 'utf8'));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}
