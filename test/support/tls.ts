// TLS for suites that need it: a self-signed certificate for 127.0.0.1 made with Debian's openssl.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const OPENSSL = ['/usr/bin/openssl', '/usr/local/bin/openssl'].find((path) => existsSync(path));

/** A self-signed certificate for 127.0.0.1 written into `dir`, and the CA a client trusts it by (itself). */
export function selfSignedCertificate(dir: string): { certificate: string; key: string; ca: Buffer } {
  if (!OPENSSL) throw new Error('openssl is not installed');
  const certificate = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  const made = spawnSync(
    OPENSSL,
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', certificate, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
    { encoding: 'utf8' },
  );
  if (made.status !== 0) throw new Error(`openssl failed: ${made.stderr}`);
  return { certificate, key, ca: readFileSync(certificate) };
}
