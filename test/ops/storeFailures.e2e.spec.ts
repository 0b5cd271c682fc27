// The store on a bad day, through the running service: appends that fail (disk full, read-only),
// a live subscription that drops, and a read model that throws on an event. Failures are
// injected under resumingStore by test/support/faultyStore.ts (this runs as root, so file modes
// cannot make the SQLite file unwritable).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { capturedLog } from '../support/capturedLog.js';
import { FaultyStore } from '../support/faultyStore.js';
import { ALICE, startHarness, type Harness } from '../support/harness.js';

async function withFaults(run: (h: Harness, faults: FaultyStore, logLines: () => Array<Record<string, unknown>>) => Promise<void>) {
  let faults: FaultyStore | undefined;
  const { log, lines } = capturedLog('warn');
  const h = await startHarness({
    wrapStore: (store) => {
      faults = new FaultyStore(store);
      return faults;
    },
    log,
  });
  try {
    await run(h, faults!, lines);
  } finally {
    await h.close();
  }
}

const diskFull = () => Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
const metric = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? 'NaN');

test('/readyz answers 503 naming the cause while appends fail, and 200 again once the store takes one; the recovery is in the log once', () =>
  withFaults(async (h, faults) => {
    const { key } = await h.key();
    const operator = await h.key(['audit:read'], 'ops', { allApps: true });
    assert.is((await h.get('/readyz')).status, 200);

    faults.appendFailure = diskFull();
    const push = await h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'lost', data: {} }, key);
    assert.is(push.status, 503, push.text);
    assert.is(push.body.data.reason, 'store_unavailable');
    for (let i = 0; i < 2; i++) {
      const notReady = await h.get('/readyz', operator.key);
      assert.is(notReady.status, 503);
      assert.is(notReady.body.status, 'not ready');
      assert.is(notReady.body.reason, 'store_appends_failing');
      assert.match(notReady.body.detail, /^Appends to the event store fail \(since \d{4}-\d\d-\d\dT[\d:.]+Z\): database or disk is full$/);
    }
    assert.ok(metric((await h.get('/metrics')).text, 'store_append_failures_total') >= 1);

    faults.appendFailure = undefined;
    const ready = await h.get('/readyz');
    assert.is(ready.status, 200, ready.text);
    assert.is((await h.get('/readyz')).status, 200);
    const recovered = (await h.events('store-')).filter((e) => e.type === 'StoreWritesRecovered');
    assert.is(recovered.length, 1, 'one event for the outage, none for the failed probes or later checks');
    assert.equal(Object.keys(recovered[0]!.data as object).sort(), ['at', 'failedSince', 'node']);
    assert.is((await h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'kept', data: {} }, key)).status, 200);
  }));

test('a write answered while appends fail is not the last word: a successful append makes the node ready again', () =>
  withFaults(async (h, faults) => {
    const { key } = await h.key();
    faults.appendFailure = diskFull();
    assert.is((await h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'lost', data: {} }, key)).status, 503);
    faults.appendFailure = undefined;
    assert.is((await h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'kept', data: {} }, key)).status, 200);
    assert.is((await h.get('/readyz')).status, 200);
    assert.equal(await h.events('store-'), [], 'no probe was needed');
  }));

test('a dropped live subscription resumes: later writes reach the read models, and each resume is logged and counted', () =>
  withFaults(async (h, faults, logLines) => {
    await h.key();
    faults.endSubscriptions();
    // Issuing a key waits until the read models have applied it: it only answers if the runner follows the log again.
    const { key } = await h.key();
    faults.dropSubscriptions(new Error('connection reset by peer'));
    assert.is((await h.get(`/adm/vip/${ALICE.oId}`, (await h.key()).key)).status, 200);
    assert.is((await h.get(`/adm/vip/${ALICE.oId}`, key)).status, 200);
    assert.is((await h.get('/readyz')).status, 200);
    assert.is(metric((await h.get('/metrics')).text, 'store_subscription_resumes_total'), 2);
    const warnings = logLines().filter((l) => l.msg === 'event store subscription interrupted; resuming');
    assert.equal(
      warnings.map((w) => [w.cause, w.attempt]),
      [
        ['The event store ended the subscription', 1],
        ['connection reset by peer', 1],
      ],
    );
  }));

test('a read model that throws on an event: the others apply it and the service goes on, /readyz answers 503 naming it, also after a restart', async () => {
  const h = await startHarness();
  try {
    const operator = await h.key(['audit:read'], 'ops', { allApps: true });
    const { position } = await h.service.deps.store.append('vip-u1', [{ type: 'VipGranted', data: null }]);
    await h.service.deps.runner.waitFor(position);
    const notReady = await h.get('/readyz', operator.key);
    assert.is(notReady.status, 503);
    assert.is(notReady.body.reason, 'read_model_failed');
    assert.match(notReady.body.detail, new RegExp(`^Read model "[\\w-]+" failed on event #${position} \\(VipGranted in vip-u1@0\\): `));
    assert.match((await h.get('/metrics')).text, /projection_errors_total\{read_model="[\w-]+"\} [1-9]/);
    const { key } = await h.key();
    assert.is((await h.get(`/adm/vip/${ALICE.oId}`, key)).status, 200, 'later events are applied');

    await h.restart();
    assert.is((await h.get('/readyz')).status, 503, 'the service starts, and says it is not ready');
  } finally {
    await h.close();
  }
});

test.run();
