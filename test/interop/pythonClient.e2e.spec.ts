// The Python client (packages/python) run by a Python program against a real service and the
// platform simulator: every admin operation; the typed error of each failure; a write retried
// with its Idempotency-Key applied once (the simulator's ledger says so); a 429 and a 503 waited
// out for their Retry-After; an unknown outcome raised without being sent again; and, against
// loopback servers that misbehave, the answer-size bound, the call's deadline over a dripping
// answer (over TLS too), and redirects not followed. No text the client or its errors show holds
// the API key.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually } from '../support/eventually.js';
import { startFaultProxy, type FaultProxy } from '../support/faultProxy.js';
import { ALICE, BOB, withHarness, type Harness } from '../support/harness.js';
import { freePort } from '../support/ports.js';
import { runPython } from '../support/python.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';
import { selfSignedCertificate } from '../support/tls.js';
import { startWebhookReceiver } from '../support/webhookReceiver.js';
import { json, startScriptedServer, wellFormedKey, type Responder, type ScriptedServer } from '../sdk/scriptedServer.js';

const DRIVER = fileURLToPath(new URL('./python/driver.py', import.meta.url));
const POINTS = '/adm/points/edit';
const PLATFORM_POINTS = '/user/edit/points';
const MEDAL_ATTR = 'url=https://example.test/py.png&backcolor=ffffff&fontcolor=000000';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** Timers may fire a little early against performance.now(); a retry this much short of a second is still "after one second". */
const TIMER_SLACK_MS = 30;

interface ClientSettings {
  base_url: string;
  api_key: string;
  /** The driver makes an ssl_context that trusts this certificate. */
  cafile?: string;
  timeout?: number;
  max_attempts?: number;
  max_answer_bytes?: number;
}

interface Call {
  call: string;
  args?: unknown[];
  kwargs?: Record<string, unknown>;
}

/** What the driver reports of an exception (test/interop/python/driver.py). */
interface Raised {
  class: string;
  families: string[];
  str: string;
  repr: string;
  status: number | null;
  reason: string | null;
  message: string;
  data: Record<string, unknown>;
  request_id: string | null;
  idempotency_key: string | null;
  cause: string | null;
  operation_id?: string;
  operation_status?: string;
  retry_after_seconds?: number | null;
  platform_message?: string | null;
  issues?: Array<{ field: string; message: string }>;
  location_origin?: string | null;
  limit?: number;
  contradicted?: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field
type Result = { ok: any } | { error: Raised };

const call = (name: string, args: unknown[] = [], kwargs: Record<string, unknown> = {}): Call => ({ call: name, args, kwargs });

/** Runs the calls in one Python process with one client; fails on any warning, a crash, or a text that shows the key. */
async function drive(client: ClientSettings, calls: Call[]): Promise<Result[]> {
  const run = await runPython([DRIVER], { input: JSON.stringify({ client, calls }) });
  assert.is(run.code, 0, `the driver ran:\n${run.stdout}${run.stderr}`);
  assert.is(run.stderr, '', 'no warning (an unclosed socket, a thread left running…)');
  const out = JSON.parse(run.stdout) as { client_repr: string; results: Result[]; leaks: string[] };
  assert.equal(out.leaks, [], 'no text of the client or of an error shows the API key');
  assert.match(out.client_repr, /api_key=cbk_\[redacted\]/);
  assert.is(out.results.length, calls.length);
  return out.results;
}

// biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field
function ok(result: Result | undefined, what: string): any {
  assert.ok(result && 'ok' in result, `${what} succeeded: ${JSON.stringify(result)}`);
  return (result as { ok: unknown }).ok;
}

function raised(result: Result | undefined, className: string, what: string): Raised {
  assert.ok(result && 'error' in result, `${what} failed: ${JSON.stringify(result)}`);
  const error = (result as { error: Raised }).error;
  assert.is(error.class, className, `${what}: ${JSON.stringify(error)}`);
  assert.ok(error.families.includes('BridgeError'), `${what}: a BridgeError`);
  return error;
}

/** Counts of `http_requests_total` by "METHOD route status". */
async function requestCounts(h: Harness): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const m of (await h.get('/metrics')).text.matchAll(/^http_requests_total\{method="(\w+)",route="([^"]+)",status="(\d+)"\} (\d+)$/gm)) {
    counts.set(`${m[1]} ${m[2]} ${m[3]}`, Number(m[4]));
  }
  return counts;
}

async function withProxy(h: Harness, run: (proxy: FaultProxy) => Promise<void>): Promise<void> {
  const proxy = await startFaultProxy();
  proxy.target = h.url;
  try {
    await run(proxy);
  } finally {
    await proxy.close();
  }
}

test('every admin operation of the OpenAPI document, called from Python, answers as the service and the platform say', () =>
  withHarness({ COMMUNITY_TIMEOUT_MS: '300', WEBHOOKS_ALLOW_PRIVATE: 'true' }, async (h) => {
    const { key } = await h.key(['*']);
    const client = { base_url: `${h.url}/`, api_key: key };
    const { stream, clientId } = await connect(h);
    await signIn(h, clientId, ALICE.oId);
    const oId = ALICE.oId;

    const [points, give, remove, itemsEdit, itemsQuery, liveness, submit, batch, vips, push, signedIn, gone, auditPoints, auditMedals, auditItems, firstVip, online, aliceOnline] =
      await drive(client, [
        call('points.edit', [oId, 5, 'py: welcome']),
        call('medal.give', [oId, 'Py', 'used the Python client', MEDAL_ATTR]),
        call('medal.remove', [oId, 'Py']),
        call('items.edit', [oId, 'checkin1day', 1]),
        call('items.query', [oId]),
        call('liveness.get', [oId]),
        // A datetime with its zone is sent in UTC.
        call('vip.submit', [oId, 'vip', { $datetime: '2030-01-01T08:00:00+08:00' }]),
        call('vip.batch_submit', [
          oId,
          [
            { quality: 'svip', expired: '2031-01-01 00:00:00' },
            { quality: 'gold', expired: '2031-01-01 00:00:00' },
          ],
        ]),
        call('vip.get', [oId]),
        call('message.push', ['hello', { n: 1 }], { o_ids: [oId, BOB.oId, '42'] }),
        call('user.get', [clientId]),
        call('user.get', ['no-such-client']),
        call('audit.points', [oId]),
        call('audit.medals', [oId]),
        call('audit.items', [oId]),
        call('audit.vip', [oId], { limit: 1 }),
        call('presence.list', [], { limit: 10 }),
        call('presence.get', [oId]),
      ]);

    assert.is(ok(points, 'points.edit').code, 0);
    assert.type(ok(points, 'points.edit').data.transactionId, 'string');
    assert.is(h.sim.user(oId)?.points, 105);
    assert.equal([ok(give, 'medal.give').code, ok(remove, 'medal.remove').code, ok(itemsEdit, 'items.edit').code], [0, 0, 0]);
    assert.equal(h.sim.user(oId)?.medals, [], 'given, then removed');
    assert.equal(ok(itemsQuery, 'items.query').data, { checkin1day: 3 });
    assert.is(ok(liveness, 'liveness.get').liveness, 80.2);
    assert.is(ok(submit, 'vip.submit').data.expired, '2030-01-01 00:00:00.000Z');
    const batchData = ok(batch, 'vip.batch_submit').data;
    assert.equal([batchData.succeed, batchData.failed, batchData.failures[0].index], [1, 1, 1]);
    assert.equal(
      ok(vips, 'vip.get').data.map((r: { quality: string }) => r.quality),
      ['svip', 'vip'],
    );
    assert.equal(ok(push, 'message.push').data, { online: [oId], offline: [], unknown: [BOB.oId, '42'] }, 'bob never met the service');
    const frame = await eventually(() => stream.frames.find((f) => f.event === 'message'), 'the pushed message on the stream');
    assert.equal(frame.data, { app_id: 'game-one', name: 'hello', data: { n: 1 } });
    assert.equal(ok(signedIn, 'user.get').data, { authenticated: true, clientId, user: { avatar: ALICE.avatar, name: ALICE.userName, nickname: ALICE.nickname, oId } });
    assert.is(ok(gone, 'user.get of no client'), null, 'no such client: None');
    assert.equal(
      ok(auditPoints, 'audit.points').data.items.map((e: { request: { memo: string }; outcome: { status: string } }) => [e.request.memo, e.outcome.status]),
      [['py: welcome', 'applied']],
    );
    assert.equal(
      ok(auditMedals, 'audit.medals').data.items.map((e: { action: string }) => e.action),
      ['give', 'remove'],
    );
    assert.equal(
      ok(auditItems, 'audit.items').data.items.map((e: { request: { sum: number } }) => e.request.sum),
      [1],
    );
    const first = ok(firstVip, 'audit.vip').data;
    assert.equal(
      first.items.map((e: { quality: string }) => e.quality),
      ['vip'],
    );
    assert.type(first.next, 'number');
    const [entry] = ok(online, 'presence.list').data.items;
    assert.equal([entry.oId, entry.name, entry.clients], [oId, ALICE.userName, 1]);
    assert.equal(ok(aliceOnline, 'presence.get').data, { oId, online: true, clients: 1, since: entry.since, userId: entry.userId });

    // An unknown outcome, resolved from Python; then the next VIP page.
    h.sim.faultNext(PLATFORM_POINTS, { kind: 'hang' });
    const [unknown] = await drive(client, [call('points.edit', [oId, 7, 'py: unknown'])]);
    const operationId = raised(unknown, 'OutcomeUnknownError', 'the unanswered edit').operation_id!;
    const [listed, resolved, secondVip] = await drive(client, [
      call('operations.list', [], { status: 'unknown', search: operationId }),
      call('operations.resolve', [operationId, true], { note: 'seen in the ledger' }),
      call('audit.vip', [oId], { after: first.next }),
    ]);
    assert.equal(
      ok(listed, 'operations.list').data.operations.map((o: { operationId: string; status: string }) => [o.operationId, o.status]),
      [[operationId, 'unknown']],
    );
    assert.equal(ok(resolved, 'operations.resolve').data, { operationId, status: 'applied' });
    assert.equal(
      ok(secondVip, 'audit.vip after next').data.items.map((e: { quality: string }) => e.quality),
      ['svip'],
    );

    // A webhook endpoint registered from Python hears of a sign-in, which is then sent again from Python.
    const receiver = await startWebhookReceiver();
    try {
      const [registered, listed] = await drive(client, [call('webhooks.register', [receiver.url, ['client.signed_in']], { description: 'py' }), call('webhooks.list')]);
      const endpoint = ok(registered, 'webhooks.register').data.endpoint;
      assert.match(ok(registered, 'webhooks.register').data.secret, /^whsec_/);
      assert.equal(
        ok(listed, 'webhooks.list').data.items.map((e: { id: string }) => e.id),
        [endpoint.id],
      );
      const later = await connect(h);
      await signIn(h, later.clientId, oId);
      later.stream.close();
      const eventId = (await eventually(() => receiver.arrivals[0], 'the sign-in at the receiver')).event.id;
      await eventually(async () => (await h.get(`/adm/webhooks/${endpoint.id}/attempts`, key)).body.data.items[0]?.result === 'delivered', 'its delivery recorded');
      const [got, attempts, resent, rotated, disabled, enabled, deleted] = await drive(client, [
        call('webhooks.get', [endpoint.id]),
        call('webhooks.attempts', [endpoint.id], { limit: 10 }),
        call('webhooks.resend', [endpoint.id, eventId]),
        call('webhooks.rotate', [endpoint.id]),
        call('webhooks.disable', [endpoint.id]),
        call('webhooks.enable', [endpoint.id]),
        call('webhooks.delete', [endpoint.id]),
      ]);
      assert.is(ok(got, 'webhooks.get').data.url, receiver.url);
      assert.equal(
        ok(attempts, 'webhooks.attempts').data.items.map((a: { eventId: string; result: string }) => [a.eventId, a.result]),
        [[eventId, 'delivered']],
      );
      assert.equal(ok(resent, 'webhooks.resend').data.eventId, eventId);
      assert.match(ok(rotated, 'webhooks.rotate').data.secret, /^whsec_/);
      assert.equal([ok(disabled, 'webhooks.disable').data.status, ok(enabled, 'webhooks.enable').data.status], ['disabled', 'enabled']);
      assert.equal(ok(deleted, 'webhooks.delete').data, { id: endpoint.id, deleted: true });
    } finally {
      await receiver.close();
    }
    stream.close();

    // Each admin operation the document lists answered a success to these calls (the test made no other).
    const document = (await h.get('/openapi.json')).body as { paths: Record<string, Record<string, { 'x-permission'?: string }>> };
    const counts = await requestCounts(h);
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => operation['x-permission'] !== undefined)
        .map(([method]) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
    );
    assert.ok(operations.length >= 16, `the document's admin operations: ${operations}`);
    assert.equal(
      operations.filter((operation) => !((counts.get(`${operation} 200`) ?? 0) > 0)),
      [],
      'operations the Python client did not call successfully',
    );
  }));

test('each failure raises its typed error: 401, 403, 400 with every issue, 404, 409, 422', () =>
  withHarness({}, async (h) => {
    const [unauthorized] = await drive({ base_url: h.url, api_key: wellFormedKey() }, [call('vip.get', [ALICE.oId])]);
    const auth = raised(unauthorized, 'AuthError', 'an unknown key');
    assert.equal([auth.status, auth.reason, auth.message], [401, null, 'Invalid apiKey']);
    assert.match(auth.request_id ?? '', UUID, 'the X-Request-Id it sent');

    const { key: readOnly } = await h.key(['vip:read']);
    const [denied] = await drive({ base_url: h.url, api_key: readOnly }, [call('points.edit', [ALICE.oId, 1, 'py: no'])]);
    const permission = raised(denied, 'PermissionDeniedError', 'a key without points:edit');
    assert.equal([permission.status, permission.message], [403, 'No permission to access this resource']);
    assert.match(permission.idempotency_key ?? '', UUID, 'a write carries a key made for it');

    const { key } = await h.key(['*']);
    const [invalid, unknownUser, unknownOperation, unaffordable, first, reused] = await drive({ base_url: h.url, api_key: key }, [
      call('points.edit', ['alice', 0, ''], { idempotency_key: 'py-invalid' }),
      call('liveness.get', ['999999999']),
      call('operations.resolve', ['nosuchoperation', true]),
      call('items.edit', [BOB.oId, 'checkin1day', -1]),
      call('points.edit', [ALICE.oId, 1, 'py: first'], { idempotency_key: 'py-order-17' }),
      call('points.edit', [ALICE.oId, 2, 'py: first'], { idempotency_key: 'py-order-17' }),
    ]);
    const validation = raised(invalid, 'ValidationError', 'an invalid edit');
    assert.equal([validation.status, validation.reason, validation.idempotency_key], [400, 'validation_failed', 'py-invalid']);
    assert.equal(
      validation.issues?.map((i) => i.field),
      ['oId', 'point', 'memo'],
    );
    const notFound = raised(unknownUser, 'NotFoundError', 'an unknown user');
    assert.equal([notFound.status, notFound.reason, notFound.data.oId, notFound.idempotency_key], [404, 'user_not_found', '999999999', null]);
    assert.equal([raised(unknownOperation, 'NotFoundError', 'an unknown operation').reason], ['not_found']);
    const conflict = raised(unaffordable, 'ConflictError', 'an unaffordable deduction');
    assert.equal([conflict.status, conflict.reason], [409, 'conflict']);
    assert.is(ok(first, 'the first use of a key').code, 0);
    const keyReused = raised(reused, 'ConflictError', 'the key with another body');
    assert.equal([keyReused.status, keyReused.reason], [422, 'idempotency_key_reused']);
    assert.is(h.sim.pointsApplied('py: first'), 1);
    assert.is(h.sim.calls('/user/edit/items'), 0, 'the unaffordable deduction was not sent');
  }));

test('a retry after a lost answer carries the same Idempotency-Key and is applied once', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key(['*']);
    await withProxy(h, async (proxy) => {
      // The service does the work and answers; the answer never reaches the client.
      proxy.failNext(POINTS, { kind: 'loseAnswer' });
      const [answer] = await drive({ base_url: proxy.url, api_key: key }, [call('points.edit', [ALICE.oId, 1, 'py: lost answer'])]);
      assert.is(ok(answer, 'the edit').code, 0);
      const sent = proxy.headers(POINTS);
      assert.is(sent.length, 2, 'sent again once');
      assert.match(String(sent[0]!['idempotency-key']), UUID);
      assert.equal([sent[1]!['idempotency-key'], sent[1]!['x-request-id']], [sent[0]!['idempotency-key'], sent[0]!['x-request-id']]);
      assert.is(h.sim.pointsApplied('py: lost answer'), 1, 'applied once, by the platform’s ledger');
      assert.is(h.sim.arrivals(PLATFORM_POINTS).length, 1);
    });
  }));

test('a retry that finds its first attempt still running waits for the Retry-After of the 409, then gets its answer', () =>
  withHarness({ COMMUNITY_TIMEOUT_MS: '5000' }, async (h) => {
    const { key } = await h.key(['*']);
    await withProxy(h, async (proxy) => {
      const memo = 'py: still running';
      h.sim.faultNext(PLATFORM_POINTS, { kind: 'delayThenApply', ms: 1_200 });
      proxy.failNext(POINTS, { kind: 'cutAfter', ms: 200 });
      const [answer] = await drive({ base_url: proxy.url, api_key: key, max_attempts: 6, timeout: 20 }, [call('points.edit', [ALICE.oId, 1, memo])]);
      assert.is(ok(answer, 'the edit').code, 0);
      const sent = proxy.headers(POINTS);
      assert.ok(sent.length >= 3, `cut off, still running (409), answered: ${sent.length} attempts`);
      assert.equal(new Set(sent.map((s) => s['idempotency-key'])).size, 1, 'one Idempotency-Key');
      assert.ok(((await requestCounts(h)).get(`POST ${POINTS} 409`) ?? 0) >= 1, 'the service answered claim_in_progress');
      assert.is(h.sim.pointsApplied(memo), 1);
    });
  }));

test('a 429 from the service is waited out for its Retry-After and sent again with the same key', () =>
  withHarness({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '1' }, async (h) => {
    const { key } = await h.key(['*']);
    await withProxy(h, async (proxy) => {
      const results = await drive({ base_url: proxy.url, api_key: key, timeout: 20 }, [
        call('points.edit', [ALICE.oId, 1, 'py: burst']),
        call('points.edit', [ALICE.oId, 1, 'py: over the limit']),
      ]);
      assert.equal(
        results.map((r) => ok(r, 'an edit').code),
        [0, 0],
      );
      assert.ok(((await requestCounts(h)).get(`POST ${POINTS} 429`) ?? 0) >= 1, 'the second met the rate limit');
      const sent = proxy.headers(POINTS);
      assert.ok(sent.length >= 3, `${sent.length} requests`);
      assert.equal(new Set(sent.slice(1).map((s) => s['idempotency-key'])).size, 1, 'the second call kept its key across its attempts');
      assert.is(h.sim.pointsApplied('py: burst'), 1);
      assert.is(h.sim.pointsApplied('py: over the limit'), 1);
    });
  }));

/** A loopback server, recording when each request arrived. */
async function withScripted(respond: Responder, run: (server: ScriptedServer & { arrivals: number[] }) => Promise<void>): Promise<void> {
  const arrivals: number[] = [];
  const server = await startScriptedServer((request, res, index) => {
    arrivals.push(performance.now());
    respond(request, res, index);
  });
  try {
    await run(Object.assign(server, { arrivals }));
  } finally {
    await server.close();
  }
}

const notReady = { code: 503, message: 'Starting: catching up with the event store', data: { reason: 'not_ready', retryAfterSeconds: 1 } };

test('a 503 with Retry-After: 1 is sent again a second later, with the same Idempotency-Key and X-Request-Id', () =>
  withScripted(
    (_req, res, n) => (n === 1 ? json(res, 503, notReady, { 'Retry-After': '1' }) : json(res, 200, { code: 0, msg: 'success' })),
    async (server) => {
      const [answer] = await drive({ base_url: server.url, api_key: wellFormedKey() }, [call('points.edit', [ALICE.oId, 1, 'py: starting'])]);
      assert.is(ok(answer, 'the edit').code, 0);
      assert.is(server.received.length, 2);
      const [firstAt, secondAt] = server.arrivals as [number, number];
      assert.ok(secondAt - firstAt >= 1000 - TIMER_SLACK_MS, `the second attempt came ${Math.round(secondAt - firstAt)} ms after the first`);
      const [a, b] = server.received as [(typeof server.received)[0], (typeof server.received)[0]];
      assert.equal([b.headers['idempotency-key'], b.headers['x-request-id']], [a.headers['idempotency-key'], a.headers['x-request-id']]);
    },
  ));

test('a Retry-After past the deadline is not waited for: UnavailableError at once', () =>
  withScripted(
    (_req, res) => json(res, 503, { ...notReady, data: { reason: 'not_ready', retryAfterSeconds: 30 } }, { 'Retry-After': '30' }),
    async (server) => {
      const [answer] = await drive({ base_url: server.url, api_key: wellFormedKey(), timeout: 5 }, [call('vip.get', [ALICE.oId])]);
      const error = raised(answer, 'UnavailableError', 'the read');
      assert.equal([error.status, error.reason, error.retry_after_seconds], [503, 'not_ready', 30]);
      assert.is(server.received.length, 1);
    },
  ));

test('an unknown outcome raises OutcomeUnknownError at once, is never sent again, and its key answers the resolution', () =>
  withHarness({ COMMUNITY_TIMEOUT_MS: '300' }, async (h) => {
    const { key } = await h.key(['*']);
    await withProxy(h, async (proxy) => {
      const client = { base_url: proxy.url, api_key: key, max_attempts: 10 };
      const memo = 'py: never answered';
      const edit = call('points.edit', [ALICE.oId, 5, memo], { idempotency_key: 'py-unknown-1' });
      h.sim.faultNext(PLATFORM_POINTS, { kind: 'hang' });
      const [unknown] = await drive(client, [edit]);
      const error = raised(unknown, 'OutcomeUnknownError', 'the unanswered edit');
      assert.equal([error.status, error.reason, error.operation_status, error.idempotency_key], [504, 'outcome_unknown', 'unknown', 'py-unknown-1']);
      assert.match(error.operation_id ?? '', /^[a-z0-9]{15}$/);
      assert.match(error.str, /do not send it again and keep idempotency_key 'py-unknown-1': an operator resolves operation [a-z0-9]{15}/);
      assert.is(proxy.calls(POINTS), 1, 'the client did not send it again, whatever max_attempts allows');
      assert.is(h.sim.arrivals(PLATFORM_POINTS).filter((a) => a.body.memo === memo).length, 1);

      const [resolved, retried, again] = await drive(client, [
        call('operations.resolve', [error.operation_id, false], { note: 'not in the ledger' }),
        edit,
        call('operations.resolve', [error.operation_id, true]),
      ]);
      assert.equal(ok(resolved, 'the resolution').data, { operationId: error.operation_id, status: 'failed' });
      const notApplied = raised(retried, 'OperationNotAppliedError', 'the same key after the resolution');
      assert.equal([notApplied.status, notApplied.operation_id, notApplied.contradicted], [409, error.operation_id, false]);
      assert.equal([raised(again, 'ConflictError', 'a second resolution').reason], ['conflict']);
      assert.is(h.sim.arrivals(PLATFORM_POINTS).filter((a) => a.body.memo === memo).length, 1, 'still sent to the platform once');
    });
  }));

interface Misbehaving {
  url: string;
  requests: number;
  /** Bytes handed to the connection before it ended. */
  written: number;
  /** Whether the connection ended before the server was done: the client let go. */
  clientLetGo: Promise<boolean>;
  close(): Promise<void>;
}

/** An HTTP server whose one answer is a body of `total` bytes, written as fast as the client takes it. */
async function hugeBodyServer(total: number, declareLength: boolean): Promise<Misbehaving> {
  let letGo!: (value: boolean) => void;
  const server: Misbehaving = { url: '', requests: 0, written: 0, clientLetGo: new Promise((resolve) => (letGo = resolve)), close: async () => undefined };
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const http = createHttpServer((_req, res: ServerResponse) => {
    server.requests++;
    res.writeHead(200, { 'Content-Type': 'application/json', ...(declareLength && { 'Content-Length': String(total) }) });
    res.on('close', () => letGo(server.written < total));
    const pump = () => {
      while (server.written < total && !res.destroyed) {
        server.written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  server.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  server.close = () =>
    new Promise<void>((resolve) => {
      http.closeAllConnections();
      http.close(() => resolve());
    });
  return server;
}

const MIB = 1024 * 1024;

test('an answer longer than max_answer_bytes is not read: AnswerTooLargeError, declared or not, and not retried', async () => {
  for (const declareLength of [true, false]) {
    const server = await hugeBodyServer(256 * MIB, declareLength);
    try {
      const client = declareLength ? { base_url: server.url, api_key: wellFormedKey(), max_answer_bytes: MIB } : { base_url: server.url, api_key: wellFormedKey() };
      const [answer] = await drive(client, [call('vip.get', [ALICE.oId])]);
      const error = raised(answer, 'AnswerTooLargeError', `a 256 MiB answer (Content-Length ${declareLength ? 'declared' : 'absent'})`);
      assert.equal([error.status, error.reason, error.limit], [200, 'answer_too_large', declareLength ? MIB : 4 * MIB], 'the default bound is 4 MiB');
      assert.is(server.requests, 1, 'not sent again');
      assert.is(await server.clientLetGo, true, 'the client closed the connection before the body ended');
      assert.ok(server.written < 64 * MIB, `the server wrote ${server.written} bytes before the client let go`);
    } finally {
      await server.close();
    }
  }
});

/** A TCP server that answers its first request a byte at a time, every `everyMs`, forever; `head` is sent at once. */
async function drippingServer(head: string, drip: string, everyMs: number): Promise<Misbehaving> {
  let letGo!: (value: boolean) => void;
  const sockets = new Set<Socket>();
  const server: Misbehaving = { url: '', requests: 0, written: 0, clientLetGo: new Promise((resolve) => (letGo = resolve)), close: async () => undefined };
  const tcp = createTcpServer((socket) => {
    sockets.add(socket);
    server.requests++;
    socket.on('error', () => undefined);
    socket.once('data', () => {
      socket.write(head);
      let n = 0;
      const timer = setInterval(() => {
        if (socket.destroyed || socket.writableEnded) return;
        socket.write(drip[n++ % drip.length]!);
        server.written++;
      }, everyMs);
      socket.on('close', () => {
        clearInterval(timer);
        letGo(true);
      });
    });
  });
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  server.url = `http://127.0.0.1:${(tcp.address() as AddressInfo).port}`;
  server.close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      tcp.close(() => resolve());
    });
  return server;
}

test('the deadline covers the whole answer: a body or a head that drips forever ends in BridgeTimeoutError, not retried', async () => {
  const cases: Array<[string, string, string]> = [
    ['a dripping body', 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"code":0,"msg":"', 'x'],
    ['a dripping head', 'HTTP/1.1 200 OK\r\n', 'X-Slow: yes\r\n'],
  ];
  for (const [what, head, drip] of cases) {
    const server = await drippingServer(head, drip, 50);
    try {
      const [answer] = await drive({ base_url: server.url, api_key: wellFormedKey(), timeout: 1.5 }, [call('points.edit', [ALICE.oId, 1, 'py: drip'])]);
      const error = raised(answer, 'BridgeTimeoutError', what);
      assert.ok(error.families.includes('BridgeConnectionError'), 'a kind of no answer');
      assert.equal([error.status, error.reason, error.message], [null, 'timeout', 'No answer within 1.5 s']);
      assert.match(error.idempotency_key ?? '', UUID, 'the key to retry it with later');
      assert.is(server.requests, 1, 'not sent again');
      assert.ok(server.written > 0, `${what}: it did drip`);
      assert.is(await server.clientLetGo, true, 'the client closed the connection');
    } finally {
      await server.close();
    }
  }
});

test('over https: the certificate is checked (a context that trusts it may be given), and the deadline cuts a dripping answer', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'community-bridge-tls-'));
  const { certificate, key } = selfSignedCertificate(dir);
  const timers = new Set<NodeJS.Timeout>();
  let dripClosed = false;
  const server = createHttpsServer({ cert: await readFile(certificate, 'utf8'), key: await readFile(key, 'utf8') }, (req, res) => {
    if (req.url?.startsWith('/adm/vip/')) return json(res, 200, { code: 0, msg: 'success', data: [] });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '1000000' }).write('{"code":0,"msg":"');
    const timer = setInterval(() => res.write('x'), 50);
    timers.add(timer);
    res.on('close', () => {
      clearInterval(timer);
      dripClosed = true;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const [read, dripping] = await drive({ base_url: url, api_key: wellFormedKey(), cafile: certificate, timeout: 1.5 }, [
      call('vip.get', [ALICE.oId]),
      call('liveness.get', [ALICE.oId]),
    ]);
    assert.equal(ok(read, 'a read over https').data, []);
    assert.equal([raised(dripping, 'BridgeTimeoutError', 'a dripping answer over TLS').reason], ['timeout']);
    await eventually(() => dripClosed, 'the client to close the TLS connection');

    const [untrusted] = await drive({ base_url: url, api_key: wellFormedKey(), max_attempts: 1 }, [call('vip.get', [ALICE.oId])]);
    const refused = raised(untrusted, 'BridgeConnectionError', 'a certificate the system does not trust');
    assert.equal([refused.reason, refused.cause], ['connection_failed', 'SSLCertVerificationError']);
  } finally {
    for (const timer of timers) clearInterval(timer);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  }
});

test('redirects are not followed, an answer that echoes the key shows it masked, and no service at all is a connection error', async () => {
  const elsewhere = await startScriptedServer();
  try {
    await withScripted(
      (_req, res) => res.writeHead(307, { Location: `${elsewhere.url}/adm/points/edit` }).end(),
      async (server) => {
        const [answer] = await drive({ base_url: server.url, api_key: wellFormedKey() }, [call('points.edit', [ALICE.oId, 1, 'py: redirected'])]);
        const error = raised(answer, 'RedirectError', 'a redirect');
        assert.equal([error.status, error.reason, error.location_origin], [307, 'redirect', elsewhere.url]);
        assert.is(server.received.length, 1, 'not sent again');
        assert.is(elsewhere.received.length, 0, 'nothing, and no key, went to the other origin');
      },
    );
  } finally {
    await elsewhere.close();
  }

  const key = wellFormedKey();
  await withScripted(
    (req, res) =>
      json(res, 400, {
        code: 400,
        message: `apiKey: ${req.headers.apikey} is odd`,
        data: { reason: 'validation_failed', issues: [{ field: 'apiKey', message: String(req.headers.apikey).toUpperCase() }] },
      }),
    async (server) => {
      const [answer] = await drive({ base_url: server.url, api_key: key }, [call('vip.get', [ALICE.oId])]);
      const error = raised(answer, 'ValidationError', 'an answer that echoes the key');
      assert.is(error.message, 'apiKey: cbk_[redacted] is odd');
      assert.equal(error.issues, [{ field: 'apiKey', message: 'cbk_[redacted]' }]);
    },
  );

  const port = await freePort();
  const [refused] = await drive({ base_url: `http://127.0.0.1:${port}`, api_key: key, max_attempts: 2 }, [call('points.edit', [ALICE.oId, 1, 'py: nobody'])]);
  const error = raised(refused, 'BridgeConnectionError', 'no service');
  assert.equal([error.status, error.reason, error.cause], [null, 'connection_failed', 'ConnectionRefusedError']);
  assert.match(error.message, /^Network error: ConnectionRefusedError: /);
});

test.run();
