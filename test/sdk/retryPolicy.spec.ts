// What the admin client sends again, and when, against loopback servers answering as told: the
// wait a Retry-After asks for is kept (measured on the server's arrival times), but not past the
// call's deadline; an outcome_unknown is sent once; backoff is full jitter within its bounds.
import { BridgeError, OutcomeUnknownError, PlatformError, RateLimitError, createAdminClient } from '@community-bridge/sdk';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { backoff, retryDelay } from '../../packages/sdk/src/retry.js';
import { rejects } from '../support/rejects.js';
import { json, startScriptedServer, wellFormedKey, type ScriptedServer, type Responder } from './scriptedServer.js';

const OID = '1630399136785';
const POINTS = { oId: OID, point: 1, memo: 'retry policy' };
const SUCCESS = { code: 0, msg: 'success', data: {} };
/** Timers may fire a little early against performance.now(); a retry this much short of a second is still "after one second". */
const TIMER_SLACK_MS = 30;

/** A loopback server answering as `respond` says, recording when each request arrived. */
async function timedService(respond: Responder): Promise<ScriptedServer & { arrivals: number[] }> {
  const arrivals: number[] = [];
  const service = await startScriptedServer((request, res, index) => {
    arrivals.push(performance.now());
    respond(request, res, index);
  });
  return Object.assign(service, { arrivals });
}

async function withService(respond: Responder, run: (service: ScriptedServer & { arrivals: number[] }) => Promise<void>): Promise<void> {
  const service = await timedService(respond);
  try {
    await run(service);
  } finally {
    await service.close();
  }
}

const errorBody = (status: number, data: Record<string, unknown>) => ({ code: status, message: `status ${status}`, data });
/** The first request gets this error (with Retry-After: 1), every later one a success. */
const onceThen =
  (status: number, data: Record<string, unknown>): Responder =>
  (_q, res, n) =>
    n === 1 ? json(res, status, errorBody(status, data), { 'Retry-After': '1' }) : json(res, 200, SUCCESS);

const cases: Array<[string, number, Record<string, unknown>]> = [
  ['429 rate_limited', 429, { reason: 'rate_limited', retryAfterSeconds: 1 }],
  ['503 not_ready', 503, { reason: 'not_ready', retryAfterSeconds: 1 }],
  ['409 claim_in_progress', 409, { reason: 'claim_in_progress', retryAfterSeconds: 1 }],
];
for (const [what, status, data] of cases) {
  test(`${what} with Retry-After: 1 is sent again a second later, with the same keys`, () =>
    withService(onceThen(status, data), async (service) => {
      const admin = createAdminClient({ baseUrl: service.url, apiKey: wellFormedKey() });
      assert.is((await admin.points.edit(POINTS)).code, 0);
      assert.is(service.received.length, 2);
      const [first, second] = service.arrivals as [number, number];
      assert.ok(second - first >= 1000 - TIMER_SLACK_MS, `the second attempt came ${Math.round(second - first)} ms after the first`);
      const [a, b] = service.received as [(typeof service.received)[number], (typeof service.received)[number]];
      assert.is(b.headers['idempotency-key'], a.headers['idempotency-key']);
      assert.is(b.headers['x-request-id'], a.headers['x-request-id']);
    }));
}

test('a Retry-After longer than the deadline leaves is not waited for: the answer stands', () =>
  withService(
    (_q, res) => json(res, 429, errorBody(429, { reason: 'rate_limited', retryAfterSeconds: 3 }), { 'Retry-After': '3' }),
    async (service) => {
      const error = await rejects(createAdminClient({ baseUrl: service.url, apiKey: wellFormedKey(), timeoutMs: 2_000 }).vip.get(OID), RateLimitError);
      assert.is(error.retryAfterSeconds, 3);
      assert.is(service.received.length, 1);
    },
  ));

for (const status of [502, 504]) {
  test(`a ${status} outcome_unknown is sent once, whatever maxAttempts says`, () =>
    withService(
      (_q, res) => json(res, status, errorBody(status, { reason: 'outcome_unknown', operationId: 'op1234567890abc', status: 'pending' })),
      async (service) => {
        const unknown = await rejects(createAdminClient({ baseUrl: service.url, apiKey: wellFormedKey(), maxAttempts: 10 }).points.edit(POINTS), OutcomeUnknownError);
        assert.equal([unknown.status, unknown.operationId, unknown.operationStatus], [status, 'op1234567890abc', 'pending']);
        assert.is(service.received.length, 1);
      },
    ));
}

test('sent again with backoff: a proxy’s bare 502, platform_timeout, concurrent_update; not: not_configured, internal_error, platform_rejected', async () => {
  const again: Array<[number, Record<string, unknown>]> = [
    [502, {}],
    [504, { reason: 'platform_timeout' }],
    [409, { reason: 'concurrent_update' }],
  ];
  for (const [status, data] of again) {
    await withService(
      (_q, res) => json(res, status, errorBody(status, data)),
      async (service) => {
        await rejects(createAdminClient({ baseUrl: service.url, apiKey: wellFormedKey(), maxAttempts: 2 }).points.edit(POINTS));
        assert.is(service.received.length, 2, `${status} ${JSON.stringify(data)}`);
      },
    );
  }
  const once: Array<[number, Record<string, unknown>, new (...args: never[]) => BridgeError]> = [
    [503, { reason: 'not_configured' }, BridgeError],
    [500, { reason: 'internal_error' }, BridgeError],
    [422, { reason: 'platform_rejected', platformMessage: '积分不足' }, PlatformError],
  ];
  for (const [status, data, type] of once) {
    await withService(
      (_q, res) => json(res, status, errorBody(status, data)),
      async (service) => {
        await rejects(createAdminClient({ baseUrl: service.url, apiKey: wellFormedKey(), maxAttempts: 3 }).points.edit(POINTS), type, `${status} ${JSON.stringify(data)}`);
        assert.is(service.received.length, 1, `${status} ${JSON.stringify(data)}`);
      },
    );
  }
});

test('backoff is full jitter: anywhere from 0 to min(cap, base · 2^attempt)', () => {
  assert.equal(
    [1, 2, 3, 6, 40].map((attempt) => backoff(attempt, () => 0)),
    [0, 0, 0, 0, 0],
  );
  const ceilings = [1, 2, 3, 6, 40].map((attempt) => backoff(attempt, () => 0.999_999_999));
  assert.equal(ceilings, [500, 1000, 2000, 10_000, 10_000]);
  const draws = Array.from({ length: 200 }, () => backoff(3));
  assert.ok(draws.every((ms) => Number.isInteger(ms) && ms >= 0 && ms <= 2000));
  assert.ok(new Set(draws).size > 20, 'the waits are spread, not one value');
  // A Retry-After is the least wait; the jitter may only add to it.
  assert.is(
    retryDelay({ status: 429, reason: 'rate_limited', retryAfterSeconds: 1 }, 1, () => 0),
    1000,
  );
  assert.is(
    retryDelay({ status: 429, reason: 'rate_limited', retryAfterSeconds: 1 }, 4, () => 0.999_999_999),
    4000,
  );
  assert.is(retryDelay({ status: 429, reason: 'rate_limited', retryAfterSeconds: undefined }, 1), undefined);
  assert.is(retryDelay({ status: 504, reason: 'outcome_unknown', retryAfterSeconds: 1 }, 1), undefined);
});

test.run();
