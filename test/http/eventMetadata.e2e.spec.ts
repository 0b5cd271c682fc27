// Every event a request appends says where it came from, in its metadata: the request's
// X-Request-Id (the caller's when well formed, else one the service made up), the app and key or
// the console's operator, the node, and the event that caused it (an outcome names its intent).
// The audit entries name the request too.
import { request } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { PointsAuditPage, VipAuditPage } from '../../src/contract/answers.js';
import type { RecordedEvent } from '../../src/store/port.js';
import { consolePost, signInOperator } from '../console/operatorSignIn.js';
import { eventually } from '../support/eventually.js';
import { ALICE, type Harness, withHarness } from '../support/harness.js';

const NODE = 'node-meta';
const ON = { NODE_ID: NODE, CONSOLE_ADMINS: ALICE.oId };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const editPoints = (h: Harness, key: string, requestId: string, point = 5) =>
  h.request('POST', '/adm/points/edit', { body: { oId: ALICE.oId, point, memo: 'traced' }, apiKey: key, headers: { 'X-Request-Id': requestId } });

/** The events appended after `position`. */
const since = async (h: Harness, position: number) => (await h.events()).filter((e) => e.position > position);
const head = async (h: Harness) => (await h.events()).at(-1)?.position ?? 0;

test('a request with X-Request-Id: every event it appends carries the id, the app and key, and the node; the outcome names its intent', () =>
  withHarness(ON, async (h) => {
    const { key, id: keyId } = await h.key(['points:edit'], 'game-one');
    const before = await head(h);
    const res = await editPoints(h, key, 'trace-123');
    assert.is(res.status, 200, res.text);
    assert.is(res.headers.get('x-request-id'), 'trace-123', 'echoed in the answer');

    const appended = await since(h, before);
    assert.ok(appended.some((e) => e.type === 'PointsEditRequested') && appended.some((e) => e.type === 'OperationApplied'), appended.map((e) => e.type).join());
    for (const event of appended) {
      assert.equal(event.metadata, { requestId: 'trace-123', nodeId: NODE, appId: 'game-one', keyId, ...causeOf(event, appended) }, `${event.type} in ${event.streamName}`);
    }
    const intent = appended.find((e) => e.type === 'PointsEditRequested')!;
    const outcome = appended.find((e) => e.type === 'OperationApplied')!;
    assert.is(outcome.metadata!.causationId, intent.position, 'the outcome was caused by its intent');
    assert.is(intent.metadata!.causationId, undefined, 'the intent was caused by nothing recorded');
  }));

/** The cause an event of the request must name: the request's previous event on its stream. */
function causeOf(event: RecordedEvent, appended: RecordedEvent[]): { causationId?: number } {
  const previous = appended.filter((e) => e.streamName === event.streamName && e.position < event.position).at(-1);
  return previous ? { causationId: previous.position } : {};
}

test('a malformed X-Request-Id is replaced by a generated one, which the events carry', () =>
  withHarness(ON, async (h) => {
    const { key } = await h.key(['points:edit'], 'game-one');
    for (const given of ['has spaces', 'x'.repeat(129), 'semi;colon', 'ünïcode']) {
      const before = await head(h);
      const res = await editPoints(h, key, given);
      assert.is(res.status, 200, res.text);
      const requestId = res.headers.get('x-request-id')!;
      assert.match(requestId, UUID, given);
      const appended = await since(h, before);
      assert.ok(appended.length >= 2);
      assert.ok(
        appended.every((e) => e.metadata?.requestId === requestId),
        given,
      );
    }
    // The longest well-formed id is kept as given.
    const longest = 'a.b:c-d_'.repeat(16);
    const before = await head(h);
    assert.is((await editPoints(h, key, longest)).headers.get('x-request-id'), longest);
    assert.ok((await since(h, before)).every((e) => e.metadata?.requestId === longest));
  }));

test('the points and VIP audit entries name the request that made them', () =>
  withHarness(ON, async (h) => {
    const writer = await h.key(['points:edit', 'vip:write'], 'game-one');
    const { key: auditor } = await h.key(['audit:read'], 'auditor', { allApps: true });
    assert.is((await editPoints(h, writer.key, 'trace-points')).status, 200);
    const vip = await h.request('POST', '/adm/vip/submit', {
      body: { oId: ALICE.oId, quality: 'vip', expired: '2030-01-01 00:00:00' },
      apiKey: writer.key,
      headers: { 'X-Request-Id': 'trace-vip' },
    });
    assert.is(vip.status, 200, vip.text);

    const points = await h.get(`/adm/audit/points/${ALICE.oId}`, auditor);
    assert.is(points.status, 200, points.text);
    v.parse(PointsAuditPage, points.body);
    assert.equal(
      points.body.data.items.map((e: { requestId?: string; keyId: string }) => [e.requestId, e.keyId]),
      [['trace-points', writer.id]],
    );
    const grants = await h.get(`/adm/audit/vip/${ALICE.oId}`, auditor);
    assert.is(grants.status, 200, grants.text);
    v.parse(VipAuditPage, grants.body);
    assert.equal(
      grants.body.data.items.map((e: { requestId?: string; action: string }) => [e.requestId, e.action]),
      [['trace-vip', 'granted']],
    );
  }));

test('an event appended outside any request (the harness issuing a key) carries no metadata, and reads as before', () =>
  withHarness(ON, async (h) => {
    const { id } = await h.key(['points:edit'], 'game-one');
    const [issued] = await h.events(`apikey-${id}`);
    assert.is(issued!.type, 'ApiKeyIssued');
    assert.is(issued!.metadata, undefined);
  }));

test("a console action names the operator, not an app; a realtime stream's connection names its request", () =>
  withHarness(ON, async (h) => {
    const operator = await signInOperator(h, ALICE.oId);
    const created = await consolePost(
      h,
      operator,
      '/console/api/keys',
      { appId: 'console-game', app: 'Console Game', permissions: ['vip:read'] },
      { 'X-Request-Id': 'trace-console' },
    );
    assert.is(created.status, 200, created.text);
    const [issued] = await h.events(`apikey-${created.body.key.id}`);
    assert.equal(issued!.metadata, { requestId: 'trace-console', nodeId: NODE, operator: `console:${ALICE.oId}` });

    const before = await head(h);
    const stream = await openStream(h, 'trace-stream');
    try {
      const connected = await eventually(async () => (await since(h, before)).find((e) => e.type === 'ClientConnected'), 'the connection is recorded');
      assert.is(connected.metadata?.requestId, 'trace-stream');
      assert.is(connected.metadata?.nodeId, NODE);
      assert.is(connected.metadata?.appId, undefined, 'a browser connection is no app');
    } finally {
      stream.close();
    }
  }));

/** Opens the realtime stream on a socket of its own; resolves once its first frame arrives. */
function openStream(h: Harness, requestId: string): Promise<{ close(): void }> {
  return new Promise((resolve, reject) => {
    const req = request(`${h.url}/api/realtime`, { agent: false, headers: { 'X-Request-Id': requestId } }, (res) => {
      res.once('data', () => resolve({ close: () => req.destroy() }));
      res.on('error', () => undefined);
    });
    req.on('error', reject);
    req.end();
  });
}

test.run();
