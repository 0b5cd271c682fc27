// The console's sign-in without a browser: the login page, the simulator's OpenID page (its
// `sim_user` shortcut confirms as that user), and the callback, carrying the cookies a browser
// would; then the session's token for changes. Also the service as `npm run dev` runs the console
// (live reload on), which the harness does not start.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { createSimulator, SIMULATOR_KEY } from '../../src/community/simulator.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { ConsoleSettings } from '../../src/console/index.js';
import { startService, type RunningService } from '../../src/main.js';
import { ALICE, defaultUsers, type Harness, requestAt } from '../support/harness.js';

/** What the helpers need of a running service. */
export type Reachable = Pick<Harness, 'url' | 'request'>;

export interface Operator {
  /** The Cookie header the console's pages send. */
  cookie: string;
  token: string;
  /** Set-Cookie of the session, as the callback sent it. */
  sessionCookie: string;
}

const cookiePair = (setCookie: string) => setCookie.split(';')[0]!;

/** Follows the sign-in as `oId` up to the callback's answer. */
export async function signInAt(h: Reachable, oId: string): Promise<{ callback: Response; loginCookie: string }> {
  const login = await fetch(`${h.url}/console/login`, { redirect: 'manual' });
  assert.is(login.status, 302, 'the login page sends the browser to the platform');
  const loginCookie = cookiePair(login.headers.getSetCookie().find((c) => c.startsWith('cb_console_login='))!);
  const platform = await fetch(`${login.headers.get('location')}&sim_user=${oId}`, { redirect: 'manual' });
  const callback = await fetch(platform.headers.get('location')!, { headers: { Cookie: loginCookie }, redirect: 'manual' });
  return { callback, loginCookie };
}

export async function signInOperator(h: Reachable, oId: string): Promise<Operator> {
  const { callback } = await signInAt(h, oId);
  assert.is(callback.status, 303, await callback.text());
  const sessionCookie = callback.headers.getSetCookie().find((c) => c.startsWith('cb_console='))!;
  const cookie = cookiePair(sessionCookie);
  const me = await h.request('GET', '/console/api/me', { headers: { Cookie: cookie } });
  assert.is(me.status, 200, me.text);
  return { cookie, token: me.body.token, sessionCookie };
}

/** A console page's change: the session cookie, the token and the service's own Origin. */
export function consolePost(h: Reachable, operator: Operator, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return h.request('POST', path, {
    ...(body !== undefined && { body }),
    headers: { Cookie: operator.cookie, 'X-Console-Token': operator.token, Origin: new URL(h.url).origin, ...headers },
  });
}

export function consoleGet(h: Reachable, operator: Operator, path: string) {
  return h.request('GET', path, { headers: { Cookie: operator.cookie } });
}

/** Requests to the service at `url`, answered as the harness answers them. */
export function requester(url: string): Harness['request'] {
  return (method, path, init) => requestAt(url, method, path, init);
}

/** The configuration with the console's live reload on, as `npm run dev` runs it. */
export function withLiveReloadOn(config: Config): Config {
  const settings: ConsoleSettings = { ...config.console!, liveReload: true };
  return { ...config, console: settings };
}

/** A service from the sources with the console on for ALICE and its live reload on, for one test. */
export async function withLiveReload(run: (service: Reachable & { running: RunningService }) => Promise<void>): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'community-bridge-test-'));
  const sim = await createSimulator({ users: defaultUsers() }).listen();
  const config = loadConfig({ PORT: '0', DATA_DIR: dataDir, COMMUNITY_URL: sim.url, COMMUNITY_KEY: SIMULATOR_KEY, LOG_LEVEL: 'silent', CONSOLE_ADMINS: ALICE.oId });
  const running = await startService(withLiveReloadOn(config));
  try {
    await run({ url: running.url, request: requester(running.url), running });
  } finally {
    await running.close();
    await sim.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
