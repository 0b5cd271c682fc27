// The rules behind sign-in, sessions and client presence, as given(events).when(command).then(events);
// plus the session cookie's signature and the SSE framing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ClientBoundError, clientDecider } from '../../src/domain/client.js';
import { fold } from '../../src/domain/decider.js';
import { ConflictError } from '../../src/domain/errors.js';
import type { ClientEvent, LoginEvent, LoginFailureReason, SessionEvent } from '../../src/domain/events.js';
import { loginDecider, SignInError } from '../../src/domain/login.js';
import { sessionDecider } from '../../src/domain/session.js';
import { SessionCookies } from '../../src/realtime/sessions.js';
import { formatFrame, parseLastEventId } from '../../src/realtime/sse.js';
import { deciderSpec } from '../support/deciderSpec.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:05:00.000Z';
const T2 = '2026-01-01T00:11:00.000Z';
const EXPIRES = '2026-01-01T00:10:00.000Z';
const binding = { sessionId: 'sess', userId: 'user00000000001', oId: '1630399136785' };

// ---- login attempts ----
const login = deciderSpec(loginDecider);
const CLAIM_UNTIL = '2026-01-01T00:06:00.000Z';
const ids = { stateHash: 'h', clientId: 'c' };
const claim = (claimId = 'k1', at = T0) => ({ type: 'ClaimLogin' as const, ...ids, claim: claimId, until: CLAIM_UNTIL, expires: EXPIRES, at });
const claimed = (claimId = 'k1', at = T0): LoginEvent => ({ type: 'LoginClaimed', data: { ...ids, claim: claimId, until: CLAIM_UNTIL, expires: EXPIRES, at } });
const complete = (claimId = 'k1') => ({ type: 'CompleteLogin' as const, ...ids, claim: claimId, userId: binding.userId, oId: binding.oId, sessionId: 'sess', at: T1 });
const completed: LoginEvent = { type: 'LoginCompleted', data: { ...ids, ...binding, at: T1 } };
const failWith = (reason: LoginFailureReason, claimId = 'k1') => ({ type: 'FailLogin' as const, ...ids, claim: claimId, reason, detail: 'd', at: T1 });
const released: LoginEvent = { type: 'LoginReleased', data: { ...ids, claim: 'k1', at: T1 } };

test('login: a callback claims the attempt; others are refused while the claim holds, a lapsed claim is taken over', () => {
  login.given([]).when(claim()).then([claimed()]);
  login
    .given([claimed()])
    .when(claim('k2', T1))
    .thenThrows(SignInError, /already been used/);
  login
    .given([claimed()])
    .when(claim('k2', '2026-01-01T00:07:00.000Z'))
    .then([claimed('k2', '2026-01-01T00:07:00.000Z')]);
  login
    .given([claimed(), released])
    .when(claim('k2', T1))
    .then([claimed('k2', T1)]);
});

test('login: only the claim holder completes or fails it, once', () => {
  login.given([claimed()]).when(complete()).then([completed]);
  login
    .given([claimed()])
    .when(failWith('invalid-assertion'))
    .then([{ type: 'LoginFailed', data: { ...ids, reason: 'invalid-assertion', detail: 'd', at: T1 } }]);
  login
    .given([claimed()])
    .when(complete('k2'))
    .thenThrows(SignInError, /already been used/);
  login
    .given([])
    .when(complete())
    .thenThrows(SignInError, /already been used/);
  login
    .given([claimed(), completed])
    .when(complete())
    .thenThrows(SignInError, /already been used/);
  login
    .given([claimed(), completed])
    .when(claim('k2', '2026-01-01T00:07:00.000Z'))
    .thenThrows(SignInError, /already been used/);
  login
    .given([claimed()])
    .when({ type: 'ReleaseLogin', ...ids, claim: 'k2', at: T1 })
    .thenNothing();
});

test('login: a stream recorded before login pages stopped recording their start reads as open', () => {
  const started: LoginEvent = { type: 'LoginStarted', data: { ...ids, callbackUrl: 'http://x/fishpi/callback', expires: EXPIRES, browser: 'b', at: T0 } };
  assert.equal(fold(loginDecider, [started]), { status: 'open' });
  login.given([started]).when(claim()).then([claimed()]);
});

// ---- sessions ----
const session = deciderSpec(sessionDecider);
const sessionStarted: SessionEvent = { type: 'SessionStarted', data: { ...binding, expires: EXPIRES, at: T0 } };

test('session: started once, ended once; ending again records nothing', () => {
  session
    .given([])
    .when({ type: 'StartSession', ...binding, expires: EXPIRES, at: T0 })
    .then([sessionStarted]);
  session
    .given([sessionStarted])
    .when({ type: 'StartSession', ...binding, expires: EXPIRES, at: T0 })
    .thenThrows(ConflictError);
  const ended: SessionEvent = { type: 'SessionEnded', data: { sessionId: 'sess', at: T1 } };
  session.given([sessionStarted]).when({ type: 'EndSession', sessionId: 'sess', at: T1 }).then([ended]);
  session.given([sessionStarted, ended]).when({ type: 'EndSession', sessionId: 'sess', at: T1 }).thenNothing();
  session.given([]).when({ type: 'EndSession', sessionId: 'sess', at: T1 }).thenNothing();
});

// ---- clients ----
const client = deciderSpec(clientDecider);
const connected: ClientEvent = { type: 'ClientConnected', data: { clientId: 'c', node: 'n1', at: T0 } };

test('client: connects once, on the node that holds it, with the session it came with', () => {
  client.given([]).when({ type: 'ConnectClient', clientId: 'c', node: 'n1', session: undefined, at: T0 }).then([connected]);
  client
    .given([])
    .when({ type: 'ConnectClient', clientId: 'c', node: 'n1', session: binding, at: T0 })
    .then([{ type: 'ClientConnected', data: { clientId: 'c', node: 'n1', session: binding, at: T0 } }]);
  client.given([connected]).when({ type: 'ConnectClient', clientId: 'c', node: 'n1', session: undefined, at: T0 }).thenThrows(ConflictError);
});

test('client: who opened it (Origin, browser binding hash) is recorded and kept for the login page', () => {
  const opened: ClientEvent = { type: 'ClientConnected', data: { clientId: 'c', node: 'n1', at: T0, origin: 'https://game.example', browser: 'hash' } };
  client.given([]).when({ type: 'ConnectClient', clientId: 'c', node: 'n1', session: undefined, at: T0, origin: 'https://game.example', browser: 'hash' }).then([opened]);
  assert.equal(client.given([opened]).when({ type: 'SignInClient', clientId: 'c', user: binding, rebind: false, at: T1 }).state(), {
    status: 'connected',
    clientId: 'c',
    user: binding,
    origin: 'https://game.example',
    browser: 'hash',
  });
});

test('client: a sign-in binds a connected client; a closed one has nobody to bind', () => {
  const signedIn: ClientEvent = { type: 'ClientSignedIn', data: { clientId: 'c', ...binding, at: T1 } };
  client.given([connected]).when({ type: 'SignInClient', clientId: 'c', user: binding, rebind: false, at: T1 }).then([signedIn]);
  assert.equal(client.given([connected]).when({ type: 'SignInClient', clientId: 'c', user: binding, rebind: false, at: T1 }).state(), {
    status: 'connected',
    clientId: 'c',
    user: binding,
  });
  const gone: ClientEvent = { type: 'ClientDisconnected', data: { clientId: 'c', reason: 'closed', at: T1 } };
  client.given([connected, gone]).when({ type: 'SignInClient', clientId: 'c', user: binding, rebind: false, at: T2 }).thenNothing();
  client.given([]).when({ type: 'SignInClient', clientId: 'c', user: binding, rebind: false, at: T2 }).thenNothing();
});

test('client: a bound client is signed in again only by the browser holding the connection', () => {
  const signedIn: ClientEvent = { type: 'ClientSignedIn', data: { clientId: 'c', ...binding, at: T1 } };
  const other = { sessionId: 'sess2', userId: 'user00000000002', oId: '1630399136786' };
  client
    .given([connected, signedIn])
    .when({ type: 'SignInClient', clientId: 'c', user: other, rebind: false, at: T2 })
    .thenThrows(ClientBoundError, /signed in already/);
  client
    .given([connected, signedIn])
    .when({ type: 'SignInClient', clientId: 'c', user: other, rebind: true, at: T2 })
    .then([{ type: 'ClientSignedIn', data: { clientId: 'c', ...other, at: T2 } }]);
});

test('client: disconnects once', () => {
  const gone: ClientEvent = { type: 'ClientDisconnected', data: { clientId: 'c', reason: 'logout', at: T1 } };
  client.given([connected]).when({ type: 'DisconnectClient', clientId: 'c', reason: 'logout', at: T1 }).then([gone]);
  client.given([connected, gone]).when({ type: 'DisconnectClient', clientId: 'c', reason: 'closed', at: T2 }).thenNothing();
});

// ---- the cookie and the frames ----
test('session cookie: only a value signed with this secret is read back', () => {
  const cookies = new SessionCookies({ secret: Buffer.from('a'.repeat(32)), ttlMs: 86_400_000, secure: () => false });
  const other = new SessionCookies({ secret: Buffer.from('b'.repeat(32)), ttlMs: 86_400_000, secure: () => true });
  const id = 'abcdefghijklmnopqrstuvwxyz012345';
  const value = cookies.issue(id).split(';')[0]!;
  assert.is(cookies.read(`theme=dark; ${value}; lang=zh`), id);
  assert.is(other.read(value), undefined);
  assert.is(cookies.read(value.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))), undefined);
  assert.is(cookies.read(`cb_session=${id}`), undefined);
  assert.is(cookies.read(undefined), undefined);
  assert.is(cookies.issue(id).includes('; Secure'), false);
  assert.ok(other.issue(id).endsWith('; Secure'));
  assert.is(cookies.clear(), 'cb_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax');
});

test('frames: id, event and a one-line JSON data; heartbeats are comments', () => {
  assert.is(
    formatFrame({ type: 'message', id: 42, data: { app_id: 'a', name: 'n', data: { text: 'two\nlines\r\n' } } }),
    'id: 42\nevent: message\ndata: {"app_id":"a","name":"n","data":{"text":"two\\nlines\\r\\n"}}\n\n',
  );
  assert.is(formatFrame({ type: 'heartbeat' }), ': heartbeat\n\n');
  assert.is(parseLastEventId('17'), 17);
  for (const bad of ['', 'abc', '-1', '1.5', '1e3', undefined, ['1']]) assert.is(parseLastEventId(bad), undefined, String(bad));
});

test.run();
