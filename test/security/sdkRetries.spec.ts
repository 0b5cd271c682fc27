// Attack on the SDK's retries: a failure that sending again cannot mend (a refusal, a redirect, a
// malformed key, Idempotency-Key or body) must not be sent again, or every call multiplies the
// requests, and the key, put on the wire. Only a request whose fate is open (no answer, 502, 504,
// a 409 saying an attempt with the same Idempotency-Key is still running) is, with that same key;
// never an outcome_unknown, which the service will not send on again whatever comes.
import { BridgeError, OutcomeUnknownError, createAdminClient } from '@community-bridge/sdk';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { countingFetch, json, startScriptedServer, wellFormedKey, type ScriptedServer, type Responder } from '../sdk/scriptedServer.js';
import { rejects } from '../support/rejects.js';

const OID = '1630399136785';
const POINTS = { oId: OID, point: 1, memo: 'retries' };

async function withService(respond: Responder, run: (service: ScriptedServer, admin: ReturnType<typeof createAdminClient>, calls: () => number) => Promise<void>) {
  const service = await startScriptedServer(respond);
  const counted = countingFetch();
  try {
    await run(service, createAdminClient({ baseUrl: service.url, apiKey: wellFormedKey(), fetch: counted.fetch, maxAttempts: 3 }), counted.calls);
  } finally {
    await service.close();
  }
}

const answering =
  (status: number, headers: Record<string, string> = {}, data: Record<string, unknown> = {}): Responder =>
  (_q, res) =>
    json(res, status, { code: status, message: `status ${status}`, data }, headers);

for (const status of [400, 401, 403, 404, 405, 409, 410, 413, 415, 422, 431]) {
  test(`a ${status} is sent once, on GET and POST`, () =>
    withService(answering(status), async (service, admin) => {
      const read = await rejects(admin.vip.get(OID), BridgeError);
      const write = await rejects(admin.points.edit(POINTS), BridgeError);
      assert.equal([read.status, write.status], [status, status]);
      assert.is(service.received.length, 2);
    }));
}

test('a 409 whose Retry-After is beyond what the client waits for is the answer', () =>
  withService(answering(409, { 'Retry-After': '60' }), async (service, admin) => {
    assert.is((await rejects(admin.points.edit(POINTS), BridgeError)).status, 409);
    assert.is(service.received.length, 1);
  }));

test('a redirect and an answer that is not JSON are sent once', async () => {
  await withService(
    (_q, res) => res.writeHead(307, { Location: 'http://127.0.0.1:1/' }).end(),
    async (service, admin) => {
      await rejects(admin.points.edit(POINTS));
      await rejects(admin.vip.get(OID));
      assert.is(service.received.length, 2);
    },
  );
  await withService(
    (_q, res) => res.writeHead(200).end('<html>'),
    async (service, admin) => {
      assert.match((await rejects(admin.vip.get(OID))).message, /not a JSON object/);
      assert.is(service.received.length, 1);
    },
  );
});

test('a malformed Idempotency-Key or a body JSON cannot carry is refused before anything is sent', () =>
  withService(answering(200), async (service, admin, calls) => {
    for (const idempotencyKey of ['', 'order 17', 'order-17\r\nX-Injected: 1', 'é', 'k'.repeat(256)]) {
      const error = await rejects(admin.points.edit(POINTS, { idempotencyKey }), TypeError, JSON.stringify(idempotencyKey));
      assert.match(error.message, /^idempotencyKey: /);
    }
    const unsendable = await rejects(admin.points.edit({ ...POINTS, point: 1n as unknown as number }), TypeError);
    assert.match(unsendable.message, /^body: /);
    assert.is(calls(), 0, 'fetch was never called');
    assert.is(service.received.length, 0);
  }));

// What is retried stays retried, with the same key each time.
for (const status of [502, 504]) {
  test(`a ${status} is sent maxAttempts times with one Idempotency-Key`, () =>
    withService(answering(status), async (service, admin) => {
      assert.is((await rejects(admin.points.edit(POINTS), BridgeError)).status, status);
      assert.is(service.received.length, 3);
      assert.equal(new Set(service.received.map((r) => r.headers['idempotency-key'])).size, 1);
    }));
}

for (const status of [502, 504]) {
  test(`a ${status} outcome_unknown is sent once`, () =>
    withService(answering(status, {}, { reason: 'outcome_unknown', operationId: 'op1234567890abc', status: 'unknown' }), async (service, admin) => {
      await rejects(admin.points.edit(POINTS), OutcomeUnknownError);
      assert.is(service.received.length, 1);
    }));
}

test('a 409 still-running with a short Retry-After is sent again, then answered', () =>
  withService(
    (_q, res, n) =>
      n === 1 ? answering(409, { 'Retry-After': '1' }, { reason: 'claim_in_progress', retryAfterSeconds: 1 })(_q, res, n) : json(res, 200, { code: 0, msg: 'success', data: {} }),
    async (service, admin) => {
      assert.is((await admin.points.edit(POINTS)).code, 0);
      assert.is(service.received.length, 2);
      assert.is(service.received[1]!.headers['idempotency-key'], service.received[0]!.headers['idempotency-key']);
    },
  ));

test('a connection cut before the answer is sent again', () =>
  withService(
    (_q, res, n) => (n === 1 ? res.socket?.destroy() : json(res, 200, { code: 0, msg: 'success', data: {} })),
    async (service, admin) => {
      assert.is((await admin.points.edit(POINTS)).code, 0);
      assert.is(service.received.length, 2);
      assert.is(service.received[1]!.headers['idempotency-key'], service.received[0]!.headers['idempotency-key']);
    },
  ));

test.run();
