// The SDK's verifyWebhookSignature against the vectors the Python client's test reads too
// (test/interop/webhookSignatures.json), and against signatures made by `openssl dgst -sha256
// -hmac`, as a shell script or another language would make them; and docs/api.md's openssl
// snippets, run as written: the check says "authentic" exactly when the SDK does, and a body
// signed by the other one is accepted by the SDK at a real receiver.
import { verifyWebhookSignature, WebhookSignatureError } from '@community-bridge/sdk';
import { execFile, spawnSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from '../support/rejects.js';

type Body = { text: string } | { base64: string };

interface Vectors {
  signatures: Array<{ secret: string; t: number; body: Body; v1: string }>;
  cases: Array<{ name: string; header: string; body: Body; secret: string; now: number; tolerance?: number; expect: string }>;
}

const VECTORS = JSON.parse(readFileSync(new URL('../interop/webhookSignatures.json', import.meta.url), 'utf8')) as Vectors;

const bytesOf = (body: Body): Buffer => ('base64' in body ? Buffer.from(body.base64, 'base64') : Buffer.from(body.text, 'utf8'));

/** `printf '%s.' "$t"; cat body` piped into `openssl dgst -sha256 -hmac "$secret" -r`: its hex digest. */
function opensslV1(secret: string, t: number, payload: Uint8Array): string {
  const run = spawnSync('openssl', ['dgst', '-sha256', '-hmac', secret, '-r'], { input: Buffer.concat([Buffer.from(`${t}.`), payload]) });
  assert.is(run.status, 0, `openssl: ${run.stderr}`);
  const digest = run.stdout.toString('ascii').split(' ')[0]!;
  assert.match(digest, /^[0-9a-f]{64}$/);
  return digest;
}

test('every shared vector verifies as expected', async () => {
  assert.ok(VECTORS.cases.length >= 20, `${VECTORS.cases.length} cases`);
  for (const c of VECTORS.cases) {
    const options = { now: c.now, ...(c.tolerance !== undefined && { toleranceSeconds: c.tolerance }) };
    if (c.expect === 'valid') {
      assert.is(await verifyWebhookSignature(bytesOf(c.body), c.header, c.secret, options), Number(/t=(\d+)/.exec(c.header)![1]), c.name);
    } else {
      const error = await rejects(verifyWebhookSignature(bytesOf(c.body), c.header, c.secret, options), WebhookSignatureError, c.name);
      assert.is(error.reason, c.expect, c.name);
    }
  }
});

test('the known answers are what openssl computes, and verify', async () => {
  for (const s of VECTORS.signatures) {
    const payload = bytesOf(s.body);
    assert.is(opensslV1(s.secret, s.t, payload), s.v1);
    assert.is(await verifyWebhookSignature(payload, `t=${s.t},v1=${s.v1}`, s.secret, { now: s.t }), s.t);
  }
});

test('a signature openssl makes over a fresh body verifies; a tampered body, another secret or a stale time does not', async () => {
  const secret = `whsec_${randomBytes(18).toString('hex')}`;
  const text = JSON.stringify({ event: 'vip.granted', oId: '1630399136785', nonce: randomBytes(8).toString('hex'), text: '中文 ✓' });
  const payload = Buffer.from(text, 'utf8');
  const now = Math.floor(Date.now() / 1000);
  const header = `t=${now},v1=${opensslV1(secret, now, payload)}`;
  assert.is(await verifyWebhookSignature(payload, header, secret), now);
  assert.is(await verifyWebhookSignature(text, header, secret), now, 'the body read as text, unchanged');
  assert.is(await verifyWebhookSignature(payload.buffer.slice(payload.byteOffset, payload.byteOffset + payload.length), header, secret), now, 'an ArrayBuffer');
  for (const tampered of [payload.subarray(0, -1), Buffer.concat([payload, Buffer.from(' ')]), Buffer.from(text.replace('1630399136785', '1630399136786'))]) {
    assert.is((await rejects(verifyWebhookSignature(tampered, header, secret), WebhookSignatureError)).reason, 'signature_mismatch');
  }
  assert.is((await rejects(verifyWebhookSignature(payload, header, `${secret}x`), WebhookSignatureError)).reason, 'signature_mismatch');

  const then = now - 301;
  const stale = `t=${then},v1=${opensslV1(secret, then, payload)}`;
  assert.is((await rejects(verifyWebhookSignature(payload, stale, secret), WebhookSignatureError)).reason, 'timestamp_out_of_tolerance', 'by the system clock');
  assert.is(await verifyWebhookSignature(payload, stale, secret, { toleranceSeconds: 3600 }), then);
});

test('during a rotation the header carries both signatures, and either secret verifies', async () => {
  const [oldSecret, newSecret, other] = [0, 1, 2].map(() => `whsec_${randomBytes(18).toString('hex')}`) as [string, string, string];
  const payload = randomBytes(2048);
  const t = 1_767_225_600;
  const header = `t=${t},v1=${opensslV1(oldSecret, t, payload)},v1=${opensslV1(newSecret, t, payload)}`;
  assert.is(await verifyWebhookSignature(payload, header, oldSecret, { now: t }), t);
  assert.is(await verifyWebhookSignature(payload, header, newSecret, { now: t }), t);
  assert.is((await rejects(verifyWebhookSignature(payload, header, other, { now: t }), WebhookSignatureError)).reason, 'signature_mismatch');
});

test('settings no check could pass with are refused', async () => {
  const header = `t=1,v1=${'0'.repeat(64)}`;
  await rejects(verifyWebhookSignature(Buffer.from('{}'), header, ''), TypeError);
  await rejects(verifyWebhookSignature(Buffer.from('{}'), header, 'secret', { toleranceSeconds: -1 }), TypeError);
  await rejects(verifyWebhookSignature({} as Uint8Array, header, 'secret'), TypeError);
  assert.is((await rejects(verifyWebhookSignature(Buffer.from('{}'), undefined, 'secret'), WebhookSignatureError)).reason, 'malformed_header');
});

/** The ```sh blocks of docs/api.md's "Webhook signatures" section, in order. */
function documentedSnippets(): string[] {
  const text = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const start = text.indexOf('\n## Webhook signatures');
  assert.ok(start > 0, 'a "Webhook signatures" section');
  const end = text.indexOf('\n## ', start + 5);
  const section = text.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

const hmacHex = (secret: string, t: number, body: Buffer) => createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');

test('the openssl check of docs/api.md says authentic exactly when the SDK does', async () => {
  const [check] = documentedSnippets();
  assert.match(check ?? '', /openssl dgst -sha256 -hmac/);
  const dir = await mkdtemp(join(tmpdir(), 'community-bridge-webhook-'));
  try {
    const body = Buffer.from(JSON.stringify({ event: 'points.edited', oId: '1630399136785', text: '中文' }));
    await writeFile(join(dir, 'body.json'), body);
    const [secret, newSecret] = [`whsec_${randomBytes(12).toString('hex')}`, `whsec_${randomBytes(12).toString('hex')}`];
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<[string, string, string]> = [
      ['fresh', `t=${now},v1=${hmacHex(secret, now, body)}`, secret],
      ['rotated, the new secret', `t=${now}, v1=${hmacHex(secret, now, body)}, v1=${hmacHex(newSecret, now, body)}`, newSecret],
      ['another secret', `t=${now},v1=${hmacHex(secret, now, body)}`, newSecret],
      ['signed over another body', `t=${now},v1=${hmacHex(secret, now, Buffer.from('{}'))}`, secret],
      ['stale', `t=${now - 1000},v1=${hmacHex(secret, now - 1000, body)}`, secret],
      ['no t', `v1=${hmacHex(secret, now, body)}`, secret],
    ];
    const verdicts: string[] = [];
    for (const [what, header, key] of cases) {
      const run = spawnSync('sh', ['-c', check!], { cwd: dir, env: { ...process.env, HEADER: header, SECRET: key }, encoding: 'utf8' });
      assert.is(run.status, 0, `${what}: ${run.stderr}`);
      const sdk = await verifyWebhookSignature(body, header, key).then(
        () => 'authentic',
        () => 'refused',
      );
      assert.is(run.stdout.trim(), sdk, what);
      verdicts.push(sdk);
    }
    assert.equal(verdicts, ['authentic', 'authentic', 'refused', 'refused', 'refused', 'refused']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a body signed by the openssl snippet of docs/api.md is accepted by a receiver that verifies with the SDK', async () => {
  const [, sign] = documentedSnippets();
  assert.match(sign ?? '', /curl /);
  const secret = `whsec_${randomBytes(12).toString('hex')}`;
  const verdicts: string[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      verifyWebhookSignature(Buffer.concat(chunks), req.headers['bridge-signature'] as string | undefined, secret)
        .then(
          () => verdicts.push('authentic'),
          (error: WebhookSignatureError) => verdicts.push(error.reason),
        )
        .finally(() => res.end());
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const dir = await mkdtemp(join(tmpdir(), 'community-bridge-webhook-'));
  try {
    await writeFile(join(dir, 'body.json'), JSON.stringify({ event: 'vip.granted', oId: '1630399136785' }));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/bridge-webhook`;
    const script = sign!.replace('http://127.0.0.1:3000/bridge-webhook', url);
    assert.ok(script.includes(url), 'the snippet posts to the receiver');
    // Not spawnSync: the receiver answers from this process's event loop.
    await promisify(execFile)('sh', ['-c', script], { cwd: dir, env: { ...process.env, SECRET: secret }, timeout: 30_000 });
    assert.equal(verdicts, ['authentic']);
  } finally {
    receiver.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
