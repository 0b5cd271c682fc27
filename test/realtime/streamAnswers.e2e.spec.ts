// What the stream's answers carry besides frames, like every other answer of the service: the
// request id, nosniff, CORS's Vary, one request log line and one metrics sample; a refusal or a
// failure in the `{code, message, data}` form.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { capturedLog } from '../support/capturedLog.js';
import { eventually } from '../support/eventually.js';
import { FaultyStore } from '../support/faultyStore.js';
import { startHarness, type Harness, type HarnessOptions } from '../support/harness.js';
import { openOwnSocket } from '../support/request.js';

/** GET on a socket of its own; resolves with the first chunk of a stream, or the whole body. */
const get = (h: Harness, path: string, headers: Record<string, string> = {}) => openOwnSocket(`${h.url}${path}`, headers);

async function withLog(options: HarnessOptions, run: (h: Harness, lines: () => Array<Record<string, unknown>>) => Promise<void>) {
  const { log, lines } = capturedLog('info');
  const h = await startHarness({ ...options, log });
  try {
    await run(h, lines);
  } finally {
    await h.close();
  }
}

const requestLines = (lines: Array<Record<string, unknown>>) => lines.filter((l) => l.msg === 'request' && l.route === '/api/realtime');

test('a served stream: the caller’s request id, nosniff, Vary: Origin; logged and counted as GET /api/realtime 200', () =>
  withLog({}, async (h, lines) => {
    const stream = await get(h, '/api/realtime?lastEventId=1', { 'X-Request-Id': 'trace-stream-1' });
    assert.is(stream.status, 200);
    assert.match(stream.text, /^id: \d+\nevent: PB_CONNECT\n/);
    assert.is(stream.headers['x-request-id'], 'trace-stream-1');
    assert.is(stream.headers['x-content-type-options'], 'nosniff');
    assert.match(String(stream.headers.vary), /Origin/);
    assert.match(String(stream.headers['set-cookie']), /^cb_client=/);
    const other = await get(h, '/api/realtime', { 'X-Request-Id': 'not a valid id' });
    assert.match(String(other.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    assert.equal(
      requestLines(lines()).map((l) => [l.requestId === 'trace-stream-1', l.method, l.status]),
      [
        [true, 'GET', '200'],
        [false, 'GET', '200'],
      ],
    );
    assert.match((await h.get('/metrics')).text, /http_requests_total\{method="GET",route="\/api\/realtime",status="200"\} 2/);
    stream.close();
    other.close();
  }));

test('a refused stream answers the JSON error form with Retry-After, and is logged and counted with its status', () =>
  withLog({ env: { REALTIME_MAX_CONNECTIONS_PER_IP: '1' } }, async (h, lines) => {
    const first = await get(h, '/api/realtime');
    const refused = await get(h, '/api/realtime', { 'X-Request-Id': 'trace-refused' });
    assert.is(refused.status, 429);
    assert.is(refused.headers['content-type'], 'application/json; charset=utf-8');
    assert.is(Number(refused.headers['content-length']), Buffer.byteLength(refused.text));
    assert.equal(JSON.parse(refused.text), {
      code: 429,
      message: 'Too many realtime connections from this address (at most 1)',
      data: { reason: 'too_many_connections', retryAfterSeconds: Number(refused.headers['retry-after']) },
    });
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.is(refused.headers['x-request-id'], 'trace-refused');
    assert.is(refused.headers['x-content-type-options'], 'nosniff');
    assert.equal(requestLines(lines()).find((l) => l.requestId === 'trace-refused')?.status, '429');
    assert.match((await h.get('/metrics')).text, /http_requests_total\{method="GET",route="\/api\/realtime",status="429"\} 1/);
    first.close();
  }));

test('a store failure while opening: 503 store_unavailable in the error form with Retry-After, nothing internal said, the outage logged once, the address’s slot given back', async () => {
  let faults: FaultyStore | undefined;
  await withLog(
    {
      env: { REALTIME_MAX_CONNECTIONS_PER_IP: '1' },
      wrapStore: (store) => (faults = new FaultyStore(store)),
    },
    async (h, lines) => {
      faults!.appendFailure = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      const failed = await get(h, '/api/realtime');
      assert.is(failed.status, 503);
      assert.equal(JSON.parse(failed.text), {
        code: 503,
        message: 'The event store is unavailable: the request may not have been recorded; retry it (with the same Idempotency-Key) in a moment',
        data: { reason: 'store_unavailable', retryAfterSeconds: 1 },
      });
      assert.is(failed.headers['retry-after'], '1');
      assert.is(failed.headers['x-content-type-options'], 'nosniff');
      assert.is(lines().filter((l) => /the event store is unavailable/.test(String(l.msg))).length, 1, 'the outage is logged once');
      assert.not.ok(
        lines().some((l) => l.msg === 'unexpected error'),
        'no stack for it',
      );
      assert.equal(
        requestLines(lines()).map((l) => l.status),
        ['503'],
      );
      faults!.appendFailure = undefined;
      const again = await eventually(async () => {
        const answer = await get(h, '/api/realtime');
        return answer.status === 200 ? answer : undefined;
      }, 'the failed stream to free its slot (a stream answered 200)');
      again.close();
    },
  );
});

test.run();
