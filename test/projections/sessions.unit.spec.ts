// The sessions read model forgets expired sessions now and then (oldest first) and keeps the live
// ones, also across a snapshot.
import { deserialize, serialize } from 'node:v8';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SessionsReadModel } from '../../src/projections/sessions.js';
import type { RecordedEvent } from '../../src/store/port.js';

let position = 0;
const started = (sessionId: string, expires: string): RecordedEvent => ({
  streamName: `session-${sessionId}`,
  revision: 0,
  position: ++position,
  type: 'SessionStarted',
  data: { sessionId, userId: 'u1', oId: '1630399136785', expires, at: '2026-01-01T00:00:00.000Z' },
  metadata: undefined,
  created: '2026-01-01T00:00:00.000Z',
});

test('expired sessions are forgotten once a thousand more have started; live ones stay, across a snapshot', () => {
  let now = '2026-01-01T00:00:00.000Z';
  const model = new SessionsReadModel(() => now);
  model.apply(started('old', '2026-01-02T00:00:00.000Z'));
  model.apply(started('long', '2027-01-01T00:00:00.000Z'));
  model.apply(started('behind-long', '2026-01-02T00:00:00.000Z'));
  now = '2026-02-01T00:00:00.000Z';
  for (let i = 0; i < 996; i++) model.apply(started(`s${i}`, '2026-03-01T00:00:00.000Z'));
  assert.ok(model.get('old'), 'not swept before the thousandth start');
  model.apply(started('thousandth', '2026-03-01T00:00:00.000Z'));
  assert.is(model.get('old'), undefined, 'expired and swept');
  assert.is(model.get('long')?.expires, '2027-01-01T00:00:00.000Z');
  assert.ok(model.get('behind-long'), 'held back by the longer session before it, until that one expires');
  assert.ok(model.get('s5'));

  const restored = new SessionsReadModel(() => now);
  assert.ok(restored.restoreState(deserialize(serialize(model.snapshotState()))));
  assert.equal(restored.get('s5'), model.get('s5'));
  assert.is(restored.get('old'), undefined);
  now = '2027-06-01T00:00:00.000Z';
  for (let i = 0; i < 1000; i++) restored.apply(started(`t${i}`, '2028-01-01T00:00:00.000Z'));
  for (const gone of ['long', 'behind-long', 's5', 'thousandth']) assert.is(restored.get(gone), undefined, gone);
  assert.ok(restored.get('t999'));
});

test.run();
