// A node that starts on a long log listens at once: while its read models catch up it answers
// liveness, says it is not ready (and how far it got), and refuses everything else with 503 and
// Retry-After, so no answer comes from read models that are still behind. The catch-up is held
// back by a store wrapper (a slow disk), so every step is observed, not raced.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createSimulator, SIMULATOR_KEY } from '../../src/community/simulator.js';
import { loadConfig } from '../../src/config.js';
import { startService } from '../../src/main.js';
import { eventually } from '../support/eventually.js';
import { FaultyStore } from '../support/faultyStore.js';
import { ALICE, defaultUsers } from '../support/harness.js';
import { freePort } from '../support/ports.js';

/** Asks until the server takes connections (it starts listening a moment after startService is called). */
const firstAnswer = (url: string) => eventually(() => fetch(url).catch(() => undefined), `${url} to answer`);

test('while it catches up with the log, a starting node answers /healthz 200, /readyz 503 with its position, and 503 with Retry-After to everything else', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'community-bridge-startup-'));
  const simulator = createSimulator({ users: defaultUsers() });
  const sim = await simulator.listen();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let release: (() => void) | undefined;
  const starting = startService(loadConfig({ PORT: String(port), DATA_DIR: dataDir, COMMUNITY_URL: sim.url, COMMUNITY_KEY: SIMULATOR_KEY, LOG_LEVEL: 'silent' }), {
    wrapStore: (store) => {
      const slow = new FaultyStore(store);
      release = slow.holdReads();
      return slow;
    },
  });
  try {
    const health = await firstAnswer(`${base}/healthz`);
    assert.equal([health.status, await health.json()], [200, { status: 'ok' }]);
    const ready = await fetch(`${base}/readyz`);
    assert.equal([ready.status, await ready.json()], [503, { status: 'not ready', reason: 'starting' }]);
    const edit = await fetch(`${base}/adm/points/edit`, {
      method: 'POST',
      headers: { apiKey: 'cbk_anything', 'Content-Type': 'application/json' },
      body: JSON.stringify({ oId: ALICE.oId, point: 1, memo: 'too early' }),
    });
    assert.equal([edit.status, edit.headers.get('retry-after')], [503, '1']);
    assert.equal(await edit.json(), {
      code: 503,
      message: 'The service is starting: it is catching up with the event store; retry in a few seconds',
      data: { reason: 'not_ready', retryAfterSeconds: 1 },
    });
    assert.is(simulator.state.calls('/user/edit/points'), 0, 'nothing reached the platform');

    release!();
    await starting;
    assert.is((await fetch(`${base}/readyz`)).status, 200);
    assert.is((await fetch(`${base}/adm/points/edit`, { method: 'POST', headers: { apiKey: 'cbk_anything' } })).status, 401, 'the admin API answers once caught up');
  } finally {
    release?.();
    await (await starting.catch(() => undefined))?.close();
    await sim.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
