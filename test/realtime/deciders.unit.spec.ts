// The rules behind sign-in, sessions and client presence, as given(events).when(command).then(events);
// plus the session cookie's signature and the SSE framing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { clientDecider } from '../../src/domain/client.js';
import { ConflictError } from '../../src/domain/errors.js';
import type { ClientEvent, LoginEvent, LoginFailureReason, SessionEvent } from '../../src/domain/events.js';
import { loginDecider, SignInError } from '../../src/domain/login.js';
import { sessionDecider } from '../../src/domain/session.js';
import { SessionCookies } from '../../src/realtime/sessions.js';
import { formatFrame, parseLastEventId } from '../../src/realtime/sse.js';
import { deciderSpec } from '../support/given.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:05:00.000Z';
const T2 = '2026-01-01T00:11:00.000Z';
const EXPIRES = '2026-01-01T00:10:00.000Z';
const binding = { sessionId: 'sess', userId: 'user00000000001', oId: '1630399136785' };

// ---- login attempts ----
const login = deciderSpec(loginDecider);
const started: LoginEvent = { type: 'LoginStarted', data: { stateHash: 'h', clientId: 'c', callbackUrl: 'http://x/fishpi/callback', expires: EXPIRES, browser: 'b', at: T0 } };
const CLAIM_UNTIL = '2026-01-01T00:06:00.000Z';
const claimed = (claim = 'k1', at = T0, until = CLAIM_UNTIL): LoginEvent => ({ type: 'LoginClaimed', data: { stateHash: 'h', clientId: 'c', claim, until, at } });
const claim = (claimId = 'k1', at = T0, until = CLAIM_UNTIL) => ({ type: 'ClaimLogin' as const, claim: claimId, until, at });
const complete = (at = T1, claimId = 'k1') => ({ type: 'CompleteLogin' as const, claim: claimId, userId: binding.userId, oId: binding.oId, sessionId: 'sess', at });
const completed: LoginEvent = { type: 'LoginCompleted', data: { stateHash: 'h', clientId: 'c', ...binding, at: T1 } };
const failWith = (reason: 'cancelled' | 'expired' | 'invalid-assertion' | 'unknown-user', claimId?: string) => ({
  type: 'FailLogin' as const,
  ...(claimId !== undefined && { claim: claimId }),
  reason,
  detail: 'd',
  at: T1,
});

test('login: a state is started once, bound to the browser', () => {
  login.given([]).when({ type: 'StartLogin', stateHash: 'h', clientId: 'c', callbackUrl: 'http://x/fishpi/callback', expires: EXPIRES, browser: 'b', at: T0 }).then([started]);
  login.given([started]).when({ type: 'StartLogin', stateHash: 'h', clientId: 'c', callbackUrl: 'u', expires: EXPIRES, browser: 'b', at: T0 }).thenThrows(SignInError);
});

test('login: one callback claims a fresh state; others are refused while the claim holds, a stale claim is taken over', () => {
  login.given([started]).when(claim()).then([claimed()]);
  login.given([started, claimed()]).when(claim('k2', T1)).thenThrows(SignInError, /already been used/);
  login.given([started, claimed()]).when(claim('k2', '2026-01-01T00:07:00.000Z')).then([claimed('k2', '2026-01-01T00:07:00.000Z')]);
  login.given([started]).when(claim('k1', T2)).thenThrows(SignInError, /expired/);
  login.given([]).when(claim()).thenThrows(SignInError, /not known/);
});

test('login: only the claim holder completes, once, bound to its client', () => {
  login.given([started, claimed()]).when(complete()).then([{ type: 'LoginCompleted', data: { stateHash: 'h', clientId: 'c', ...binding, at: T1 } }]);
  login.given([started, claimed()]).when(complete(T2)).then([{ type: 'LoginCompleted', data: { stateHash: 'h', clientId: 'c', ...binding, at: T2 } }]);
  login.given([started, claimed()]).when(complete(T1, 'k2')).thenThrows(SignInError, /already been used/);
  login.given([started]).when(complete()).thenThrows(SignInError, /already been used/);
  login.given([started, claimed(), completed]).when(complete()).thenThrows(SignInError, /already been used/);
  login.given([]).when(complete()).thenThrows(SignInError, /not known/);
});

test('login: a released claim leaves the state open again; only the holder releases', () => {
  const released: LoginEvent = { type: 'LoginReleased', data: { stateHash: 'h', clientId: 'c', claim: 'k1', at: T1 } };
  login.given([started, claimed()]).when({ type: 'ReleaseLogin', claim: 'k1', at: T1 }).then([released]);
  login.given([started, claimed()]).when({ type: 'ReleaseLogin', claim: 'k2', at: T1 }).thenNothing();
  login.given([started, claimed(), released]).when(claim('k2', T1)).then([claimed('k2', T1)]);
});

test('login: a failure closes an open state, even an expired one; a held or closed state stays as it is', () => {
  const failed = (reason: LoginFailureReason, at = T1): LoginEvent => ({ type: 'LoginFailed', data: { stateHash: 'h', clientId: 'c', reason, detail: 'd', at } });
  login.given([started]).when(failWith('invalid-assertion')).then([failed('invalid-assertion')]);
  login.given([started]).when({ ...failWith('expired'), at: T2 }).then([failed('expired', T2)]);
  login.given([started, claimed()]).when(failWith('invalid-assertion', 'k1')).then([failed('invalid-assertion')]);
  login.given([started, claimed()]).when(failWith('invalid-assertion')).thenThrows(SignInError, /already been used/);
  login.given([started, claimed(), completed]).when(failWith('cancelled')).thenThrows(SignInError, /already been used/);
});

// ---- sessions ----
const session = deciderSpec(sessionDecider);
const sessionStarted: SessionEvent = { type: 'SessionStarted', data: { ...binding, expires: EXPIRES, at: T0 } };

test('session: started once, ended once; ending again records nothing', () => {
  session.given([]).when({ type: 'StartSession', ...binding, expires: EXPIRES, at: T0 }).then([sessionStarted]);
  session.given([sessionStarted]).when({ type: 'StartSession', ...binding, expires: EXPIRES, at: T0 }).thenThrows(ConflictError);
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
  client.given([]).when({ type: 'ConnectClient', clientId: 'c', node: 'n1', session: binding, at: T0 }).then([{ type: 'ClientConnected', data: { clientId: 'c', node: 'n1', session: binding, at: T0 } }]);
  client.given([connected]).when({ type: 'ConnectClient', clientId: 'c', node: 'n1', session: undefined, at: T0 }).thenThrows(ConflictError);
});

test('client: who opened it (Origin, browser binding hash) is recorded and kept for the login page', () => {
  const opened: ClientEvent = { type: 'ClientConnected', data: { clientId: 'c', node: 'n1', at: T0, origin: 'https://game.example', browser: 'hash' } };
  client.given([]).when({ type: 'ConnectClient', clientId: 'c', node: 'n1', session: undefined, at: T0, origin: 'https://game.example', browser: 'hash' }).then([opened]);
  assert.equal(client.given([opened]).when({ type: 'SignInClient', clientId: 'c', user: binding, at: T1 }).state(), {
    status: 'connected',
    clientId: 'c',
    user: binding,
    origin: 'https://game.example',
    browser: 'hash',
  });
});

test('client: a sign-in binds a connected client; a closed one has nobody to bind', () => {
  const signedIn: ClientEvent = { type: 'ClientSignedIn', data: { clientId: 'c', ...binding, at: T1 } };
  client.given([connected]).when({ type: 'SignInClient', clientId: 'c', user: binding, at: T1 }).then([signedIn]);
  assert.equal(client.given([connected]).when({ type: 'SignInClient', clientId: 'c', user: binding, at: T1 }).state(), { status: 'connected', clientId: 'c', user: binding });
  const gone: ClientEvent = { type: 'ClientDisconnected', data: { clientId: 'c', reason: 'closed', at: T1 } };
  client.given([connected, gone]).when({ type: 'SignInClient', clientId: 'c', user: binding, at: T2 }).thenNothing();
  client.given([]).when({ type: 'SignInClient', clientId: 'c', user: binding, at: T2 }).thenNothing();
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
