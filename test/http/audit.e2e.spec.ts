// Audit: GET /adm/audit/points/:oId, /medals/:oId, /items/:oId and /vip/:oId answer a user's
// history, oldest first, each entry with time, app, key, request and outcome, paged by log
// position (docs/decisions.md "Operations").
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { ItemsAuditPage, MedalAuditPage, PointsAuditPage, VipAuditPage } from '../../src/contract/answers.js';
import { ALICE, BOB, startHarness, type Harness, withHarness } from '../support/harness.js';

type PointsAudit = v.InferOutput<typeof PointsAuditPage>;
type MedalAudit = v.InferOutput<typeof MedalAuditPage>;
type ItemsAudit = v.InferOutput<typeof ItemsAuditPage>;
type VipAudit = v.InferOutput<typeof VipAuditPage>;

const SPEC_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TIMEOUT_MS = 400;

/**
 * A platform in front of the simulator: forwards every call, except the points edits it is told
 * to refuse (the platform's `code:-1` "积分不足") or to stall past the service's timeout (then
 * forwarded all the same: the edit happens after the service gave up, the case `unknown` is for).
 */
async function platformFront() {
  let target = '';
  const plan: Array<'refuse' | 'stall'> = [];
  const stalled: Promise<unknown>[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const step = req.url?.startsWith('/user/edit/points') ? plan.shift() : undefined;
    if (step === 'refuse') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ code: -1, msg: '积分不足' }));
      return;
    }
    const forward = async () => {
      const answer = await fetch(target + req.url, {
        method: req.method,
        headers: { 'user-agent': req.headers['user-agent'] ?? '', 'content-type': req.headers['content-type'] ?? 'application/json' },
        body: req.method === 'GET' ? undefined : Buffer.concat(chunks),
      });
      const body = Buffer.from(await answer.arrayBuffer());
      if (!res.destroyed) res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' }).end(body);
    };
    if (step === 'stall') stalled.push(sleep(TIMEOUT_MS + 300).then(forward));
    else await forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    forwardTo(url: string) {
      target = url;
    },
    refuseNextPoints: () => plan.push('refuse'),
    stallNextPoints: () => plan.push('stall'),
    /** Resolves once every stalled edit has reached the simulator. */
    settled: () => Promise.all(stalled),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function withFront(run: (h: Harness, front: Awaited<ReturnType<typeof platformFront>>) => Promise<void>) {
  const front = await platformFront();
  const h = await startHarness({ env: { COMMUNITY_URL: front.url, COMMUNITY_TIMEOUT_MS: String(TIMEOUT_MS) } });
  front.forwardTo(h.simUrl);
  try {
    await run(h, front);
  } finally {
    await front.settled();
    await h.close();
    await front.close();
  }
}

const withFreshHarness = (run: (h: Harness) => Promise<void>) => withHarness({}, run);

const edit = (h: Harness, key: string, point: number, memo: string) => h.post('/adm/points/edit', { oId: ALICE.oId, point, memo }, key);

const KINDS = ['points', 'medals', 'items', 'vip'] as const;
const ATTR = 'url=https://example.test/m.png&backcolor=ffffff&fontcolor=000000';

test('points audit: every edit, oldest first, with app, key, request and outcome (applied, rejected, unknown)', () =>
  withFront(async (h, front) => {
    const one = await h.key(['points:edit', 'medal:give'], 'Game One');
    const two = await h.key(['points:edit'], 'Game Two');
    // An auditor of every app (a key of its own app reads only that app's entries).
    const auditor = await h.key(['audit:read'], 'Auditor', { allApps: true });

    assert.is((await edit(h, one.key, 10, 'daily reward')).status, 200);
    front.refuseNextPoints();
    const refused = await edit(h, two.key, -500, 'shop purchase');
    assert.is(refused.status, 422, refused.text);
    front.stallNextPoints();
    const timedOut = await edit(h, one.key, 7, 'slow platform');
    assert.is(timedOut.status, 504, timedOut.text);
    // Not a points edit: absent from the points history.
    const medal = { oId: ALICE.oId, name: 'Early', description: 'early bird', attr: 'url=https://example.test/m.png&backcolor=ffffff&fontcolor=000000' };
    assert.is((await h.post('/adm/medal/give', medal, one.key)).status, 200);
    assert.is((await edit(h, two.key, -3, 'penalty')).status, 200);

    const res = await h.get<PointsAudit>(`/adm/audit/points/${ALICE.oId}`, auditor.key);
    assert.is(res.status, 200, res.text);
    assert.is(res.body.code, 0);
    assert.is(res.body.msg, 'success');
    v.parse(PointsAuditPage, res.body);
    const items = res.body.data.items;
    assert.equal(
      items.map((e) => [e.appId, e.keyId, e.request, e.outcome.status]),
      [
        ['game-one', one.id, { point: 10, memo: 'daily reward' }, 'applied'],
        ['game-two', two.id, { point: -500, memo: 'shop purchase' }, 'rejected'],
        ['game-one', one.id, { point: 7, memo: 'slow platform' }, 'unknown'],
        ['game-two', two.id, { point: -3, memo: 'penalty' }, 'applied'],
      ],
    );
    assert.is(res.body.data.next, undefined);
    assert.is(res.body.data.prev, undefined);
    const [applied, rejected, unknown] = items;
    assert.match(applied!.outcome.message!, /交易oId为/);
    assert.is(rejected!.outcome.message, '积分不足');
    assert.match(unknown!.outcome.reason!, new RegExp(`did not answer within ${TIMEOUT_MS} ms`));
    for (const entry of items) {
      assert.match(entry.time, SPEC_TIME);
      assert.match(entry.outcome.at!, SPEC_TIME);
      assert.ok(entry.outcome.at! >= entry.time);
    }
    assert.ok(
      items.every((e, i) => i === 0 || e.position > items[i - 1]!.position),
      'oldest first, by log position',
    );

    // The stalled edit did reach the platform after the service gave up: that is what `unknown` means.
    await front.settled();
    assert.is(h.sim.user(ALICE.oId)!.points, 100 + 10 + 7 - 3);
  }));

test('points audit pages with limit, after and before (cursors are log positions)', () =>
  withFreshHarness(async (h) => {
    const { key } = await h.key(['points:edit', 'audit:read']);
    for (let i = 1; i <= 7; i++) assert.is((await edit(h, key, i, `edit ${i}`)).status, 200);
    const page = async (query: string) => {
      const res = await h.get(`/adm/audit/points/${ALICE.oId}${query}`, key);
      assert.is(res.status, 200, res.text);
      v.parse(PointsAuditPage, res.body);
      return res.body.data as { items: Array<{ position: number; request: { point: number } }>; next?: number; prev?: number };
    };
    const points = (p: { items: Array<{ request: { point: number } }> }) => p.items.map((e) => e.request.point);

    const all = await page('');
    assert.equal(points(all), [1, 2, 3, 4, 5, 6, 7], 'default limit (50) holds them all');

    const first = await page('?limit=3');
    assert.equal(points(first), [1, 2, 3]);
    assert.is(first.prev, undefined);
    assert.is(first.next, first.items[2]!.position);
    const second = await page(`?limit=3&after=${first.next}`);
    assert.equal(points(second), [4, 5, 6]);
    assert.is(second.prev, second.items[0]!.position);
    const third = await page(`?limit=3&after=${second.next}`);
    assert.equal(points(third), [7]);
    assert.is(third.next, undefined);
    assert.is(third.prev, third.items[0]!.position);

    // Backwards: the entries just before the cursor, still oldest first.
    const back = await page(`?limit=2&before=${third.prev}`);
    assert.equal(points(back), [5, 6]);
    assert.is(back.next, back.items[1]!.position);
    assert.is(back.prev, back.items[0]!.position);
    assert.equal(points(await page(`?limit=50&before=${back.prev}`)), [1, 2, 3, 4]);
    // Both cursors: a range, from its start.
    const range = await page(`?after=${all.items[1]!.position}&before=${all.items[5]!.position}`);
    assert.equal(points(range), [3, 4, 5]);
    assert.equal(points(await page(`?after=${all.items[6]!.position}`)), [], 'nothing after the newest');

    for (const query of ['?limit=0', '?limit=501', '?limit=ten', '?after=-1', '?before=x', '?limit=1&limit=2']) {
      const res = await h.get(`/adm/audit/points/${ALICE.oId}${query}`, key);
      assert.is(res.status, 400, `${query}: ${res.text}`);
      assert.is(res.body.code, 400);
      assert.match(res.body.message, /^(limit|after|before): /);
    }
    assert.equal(points(await page('?limit=500')).length, 7);
  }));

test('medals and items audit: every give, removal and item edit, oldest first, with app, key, request and outcome', () =>
  withFreshHarness(async (h) => {
    const one = await h.key(['medal:give', 'medal:remove', 'items:edit', 'points:edit'], 'Game One');
    const two = await h.key(['medal:give', 'items:edit'], 'Game Two');
    const auditor = await h.key(['audit:read'], 'Auditor', { allApps: true });

    const give = (key: string, name: string, data?: string) =>
      h.post('/adm/medal/give', { oId: ALICE.oId, name, description: `${name} medal`, attr: ATTR, ...(data !== undefined && { data }) }, key);
    const items = (key: string, sum: number) => h.post('/adm/items/edit', { oId: ALICE.oId, item: 'checkin1day', sum }, key);
    assert.is((await give(one.key, 'Early')).status, 200);
    assert.is((await items(one.key, 3)).status, 200);
    assert.is((await give(two.key, 'Veteran', 'season 1')).status, 200);
    // Neither a medal nor an item edit: in neither history.
    assert.is((await edit(h, one.key, 5, 'not a medal')).status, 200);
    assert.is((await h.post('/adm/medal/remove', { oId: ALICE.oId, name: 'Early' }, one.key)).status, 200);
    assert.is((await items(two.key, -1)).status, 200);
    const unaffordable = await items(one.key, -100);
    assert.is(unaffordable.status, 409, unaffordable.text);

    const medals = await h.get<MedalAudit>(`/adm/audit/medals/${ALICE.oId}`, auditor.key);
    assert.is(medals.status, 200, medals.text);
    v.parse(MedalAuditPage, medals.body);
    const medalItems = medals.body.data.items;
    assert.equal(
      medalItems.map((e) => [e.appId, e.keyId, e.action, e.request, e.outcome.status, e.outcome.message]),
      [
        ['game-one', one.id, 'give', { name: 'Early', description: 'Early medal', attr: ATTR, data: '' }, 'applied', '勋章安装成功。'],
        ['game-two', two.id, 'give', { name: 'Veteran', description: 'Veteran medal', attr: ATTR, data: 'season 1' }, 'applied', '勋章安装成功。'],
        ['game-one', one.id, 'remove', { name: 'Early' }, 'applied', '勋章移除成功。'],
      ],
    );
    assert.equal(
      h.sim.user(ALICE.oId)!.medals.map((m) => m.name),
      ['Veteran'],
      'what the platform holds agrees',
    );

    const edits = await h.get<ItemsAudit>(`/adm/audit/items/${ALICE.oId}`, auditor.key);
    assert.is(edits.status, 200, edits.text);
    v.parse(ItemsAuditPage, edits.body);
    const itemEntries = edits.body.data.items;
    assert.equal(
      itemEntries.map((e) => [e.appId, e.keyId, e.request, e.outcome.status]),
      [
        ['game-one', one.id, { item: 'checkin1day', sum: 3 }, 'applied'],
        ['game-two', two.id, { item: 'checkin1day', sum: -1 }, 'applied'],
        ['game-one', one.id, { item: 'checkin1day', sum: -100 }, 'failed'],
      ],
    );
    assert.match(itemEntries[2]!.outcome.reason!, /has 4 of checkin1day, cannot deduct 100/);
    assert.is(h.sim.user(ALICE.oId)!.items.checkin1day, 2 + 3 - 1);

    for (const entry of [...medalItems, ...itemEntries]) {
      assert.match(entry.time, SPEC_TIME);
      assert.match(entry.outcome.at!, SPEC_TIME);
      assert.match(entry.operationId, /^[a-z0-9]{15}$/);
    }
    for (const list of [medalItems, itemEntries])
      assert.ok(
        list.every((e, i) => i === 0 || e.position > list[i - 1]!.position),
        'oldest first, by log position',
      );

    // Paged like the points audit: the give and removal of one history share its cursors.
    const first = await h.get<MedalAudit>(`/adm/audit/medals/${ALICE.oId}?limit=2`, auditor.key);
    assert.equal(
      first.body.data.items.map((e) => e.request.name),
      ['Early', 'Veteran'],
    );
    assert.is(first.body.data.next, medalItems[1]!.position);
    const rest = await h.get<MedalAudit>(`/adm/audit/medals/${ALICE.oId}?after=${first.body.data.next}`, auditor.key);
    assert.equal(
      rest.body.data.items.map((e) => e.action),
      ['remove'],
    );
    assert.is(rest.body.data.next, undefined);
    assert.is(rest.body.data.prev, medalItems[2]!.position);

    // A key reads its own app's entries only; another app's key sees none.
    const ownReader = await h.key(['audit:read'], 'Game One');
    const stranger = await h.key(['audit:read'], 'Game Three');
    const apps = async (kind: string, key: string) => {
      const res = await h.get<MedalAudit | ItemsAudit>(`/adm/audit/${kind}/${ALICE.oId}`, key);
      assert.is(res.status, 200, res.text);
      return res.body.data.items.map((e) => e.appId);
    };
    assert.equal(await apps('medals', ownReader.key), ['game-one', 'game-one']);
    assert.equal(await apps('items', ownReader.key), ['game-one', 'game-one']);
    assert.equal(await apps('medals', stranger.key), []);
    assert.equal(await apps('items', stranger.key), []);
  }));

test("an oId that is not the platform's user id is refused with a 400 naming oId, by every audit", () =>
  withFreshHarness(async (h) => {
    const { key } = await h.key(['audit:read']);
    const lookups = h.sim.calls('/api/user/getInfoById');
    for (const kind of KINDS) {
      for (const oId of ['alice', `0${ALICE.oId}`, '12345678901234567890', '1e9', '%20']) {
        const res = await h.get(`/adm/audit/${kind}/${oId}`, key);
        assert.is(res.status, 400, `${kind} ${oId}: ${res.text}`);
        assert.is(res.body.code, 400);
        assert.match(res.body.message, /^oId: /, `${kind} ${oId}`);
        assert.is(res.body.data.reason, 'validation_failed');
        assert.equal(
          res.body.data.issues.map((i: { field: string }) => i.field),
          ['oId'],
        );
      }
      const paging = await h.get(`/adm/audit/${kind}/${ALICE.oId}?limit=0`, key);
      assert.is(paging.status, 400, paging.text);
      assert.match(paging.body.message, /^limit: /);
    }
    assert.is(h.sim.calls('/api/user/getInfoById'), lookups, 'nothing asked of the platform');
  }));

test('audit needs audit:read: 403 with another permission, 401 without a valid key', () =>
  withFreshHarness(async (h) => {
    const { key } = await h.key(['points:edit', 'vip:read', 'vip:write', 'medal:give', 'medal:remove', 'items:query', 'items:edit']);
    for (const path of KINDS.map((kind) => `/adm/audit/${kind}/${ALICE.oId}`)) {
      const forbidden = await h.get(path, key);
      assert.is(forbidden.status, 403, path);
      assert.equal(forbidden.body, { code: 403, message: 'No permission to access this resource', data: {} });
      assert.is((await h.get(path)).status, 401, path);
      assert.is((await h.get(path, 'cbk_not-a-key')).status, 401, path);
    }
    const star = await h.key(['*']);
    assert.is((await h.get(`/adm/audit/vip/${ALICE.oId}`, star.key)).status, 200);
  }));

test('VIP audit: grants and renewals with quality, expiry, previous expiry and record id', () =>
  withFreshHarness(async (h) => {
    const writer = await h.key(['vip:write'], 'Game One');
    const batcher = await h.key(['vip:write'], 'Game Two');
    const { key: auditor } = await h.key(['audit:read'], 'auditor', { allApps: true });
    const submit = (expired: string, quality = 'vip') => h.post('/adm/vip/submit', { oId: ALICE.oId, quality, expired }, writer.key);
    const granted = await submit('2027-01-01 00:00:00');
    assert.is(granted.status, 200, granted.text);
    assert.is((await submit('2027-06-01 12:30:00')).status, 200);
    const batch = await h.post(
      '/adm/vip/batch-submit',
      {
        oId: ALICE.oId,
        vips: [
          { quality: 'svip', expired: '2028-01-01 00:00:00' },
          { quality: 'vip', expired: 'bad' },
          { quality: 'vip', expired: '2029-01-01 00:00:00' },
        ],
      },
      batcher.key,
    );
    assert.is(batch.status, 200, batch.text);

    const res = await h.get<VipAudit>(`/adm/audit/vip/${ALICE.oId}`, auditor);
    assert.is(res.status, 200, res.text);
    v.parse(VipAuditPage, res.body);
    const items = res.body.data.items;
    const vipId = granted.body.data.id;
    const svipId = batch.body.data.success[0].id;
    assert.equal(
      items.map(({ appId, keyId, action, recordId, quality, expired, previousExpired }) => ({ appId, keyId, action, recordId, quality, expired, previousExpired })),
      [
        { appId: 'game-one', keyId: writer.id, action: 'granted', recordId: vipId, quality: 'vip', expired: '2027-01-01 00:00:00.000Z', previousExpired: undefined },
        {
          appId: 'game-one',
          keyId: writer.id,
          action: 'renewed',
          recordId: vipId,
          quality: 'vip',
          expired: '2027-06-01 12:30:00.000Z',
          previousExpired: '2027-01-01 00:00:00.000Z',
        },
        { appId: 'game-two', keyId: batcher.id, action: 'granted', recordId: svipId, quality: 'svip', expired: '2028-01-01 00:00:00.000Z', previousExpired: undefined },
        {
          appId: 'game-two',
          keyId: batcher.id,
          action: 'renewed',
          recordId: vipId,
          quality: 'vip',
          expired: '2029-01-01 00:00:00.000Z',
          previousExpired: '2027-06-01 12:30:00.000Z',
        },
      ],
    );
    assert.not.ok('previousExpired' in items[0]!, 'a grant has no previousExpired key');
    for (const entry of items) assert.match(entry.time, SPEC_TIME);

    const paged = await h.get<VipAudit>(`/adm/audit/vip/${ALICE.oId}?limit=1&after=${items[1]!.position}`, auditor);
    assert.equal(
      paged.body.data.items.map((e) => e.quality),
      ['svip'],
    );
    assert.is(paged.body.data.next, items[2]!.position);
  }));

test('an oId with no local history answers an empty list, without asking the platform', () =>
  withFreshHarness(async (h) => {
    const { key } = await h.key(['audit:read']);
    const lookups = h.sim.calls('/api/user/getInfoById');
    for (const oId of [BOB.oId, '1234567890123']) {
      for (const kind of KINDS) {
        const res = await h.get(`/adm/audit/${kind}/${oId}`, key);
        assert.is(res.status, 200, res.text);
        assert.equal(res.body, { code: 0, msg: 'success', data: { items: [] } });
      }
    }
    assert.is(h.sim.calls('/api/user/getInfoById'), lookups);
  }));

test.run();
