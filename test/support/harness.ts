// A real service on a loopback port, with a real SQLite file in a temp dir and the community
// simulator as a real HTTP server. Small factory functions, no shared globals.
import { WorkContext } from '../../src/system/workContext.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSimulator, SIMULATOR_KEY, type SimulatorUserSeed } from '../../src/community/simulator.js';
import { loadConfig } from '../../src/config.js';
import type { Grant } from '../../src/domain/permissions.js';
import { startService, type RunningService } from '../../src/main.js';
import { ApiKeyService } from '../../src/services/apiKeys.js';
import type { Clock } from '../../src/system/clock.js';
import type { EventStore } from '../../src/store/port.js';
import type { Logger } from '../../src/log.js';
import { eventually } from './eventually.js';
import { type AnswerBody, type Answer, type RequestOptions, requestAt } from './request.js';

export { type Answer, type AnswerBody, type RequestOptions, requestAt };

export const ALICE = { oId: '1630399136785', userName: 'alice', nickname: 'Alice', avatar: 'https://example.test/alice.png' };
export const BOB = { oId: '1630399136786', userName: 'bob', nickname: 'Bob', avatar: 'https://example.test/bob.png' };

export const defaultUsers = (): SimulatorUserSeed[] => [
  { ...ALICE, points: 100, items: { checkin1day: 2 }, liveness: 80.2 },
  { ...BOB, points: 5, items: {}, liveness: 12.5 },
];

export interface HarnessOptions {
  users?: SimulatorUserSeed[];
  env?: Record<string, string>;
  /** The service's clock (default: the system clock). */
  clock?: Clock;
  /** Wraps the store adapter (test/support/faultyStore.ts injects failures there). */
  wrapStore?: (store: EventStore) => EventStore;
  /** The service's logger (default: silent). */
  log?: Logger;
  /** The data directory to start on (default: a new temp dir); removed by close() either way. */
  dataDir?: string;
}

export async function startHarness(options: HarnessOptions = {}) {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'community-bridge-test-')));
  const simulator = createSimulator({ users: options.users ?? defaultUsers() });
  const sim = await simulator.listen();
  const config = (env: Record<string, string> = {}) =>
    loadConfig({
      PORT: '0',
      DATA_DIR: dataDir,
      COMMUNITY_URL: sim.url,
      COMMUNITY_KEY: SIMULATOR_KEY,
      COMMUNITY_TIMEOUT_MS: '1000',
      LOG_LEVEL: 'silent',
      ...options.env,
      ...env,
    });
  let service: RunningService = await startService(config(), { clock: options.clock, wrapStore: options.wrapStore, log: options.log });

  const keys = () => new ApiKeyService({ store: service.deps.store, runner: service.deps.runner, keys: service.deps.readModels.apiKeys, clock: service.deps.clock });

  const harness = {
    dataDir,
    sim: simulator.state,
    simUrl: sim.url,
    get url() {
      return service.url;
    },
    get service() {
      return service;
    },
    keys,
    /**
     * Issues a key and returns it in clear, with its id. `app`: the app's name; its id is the name
     * when that is an id, else the name folded (the test's choice). `allApps`: the key reaches
     * every app's records (auditors, operators).
     */
    async key(permissions: Grant[] = ['*'], app = 'game-one', options: { allApps?: boolean } = {}) {
      const appId = /^[a-z0-9][a-z0-9_.-]*$/.test(app)
        ? app
        : app
            .toLowerCase()
            .replace(/[^a-z0-9]+/g, '-')
            .replace(/^-+|-+$/g, '');
      return keys().issue(WorkContext.unattributed, { appId, app, permissions, expires: null, allApps: options.allApps });
    },
    request<T = AnswerBody>(method: string, path: string, init: RequestOptions = {}): Promise<Answer<T>> {
      return requestAt<T>(service.url, method, path, init);
    },
    post<T = AnswerBody>(path: string, body: unknown, apiKey?: string) {
      return harness.request<T>('POST', path, { body, apiKey });
    },
    get<T = AnswerBody>(path: string, apiKey?: string) {
      return harness.request<T>('GET', path, { apiKey });
    },
    /** Waits until the service has applied its store's log as it is now, what other processes wrote included. */
    async caughtUp() {
      const head = await service.deps.store.headPosition();
      await eventually(() => service.deps.runner.position >= head, { what: () => `the service to apply the log up to ${head} (at ${service.deps.runner.position})` });
    },
    /** Stops the service and starts it again on the same data directory (`env`: settings changed for this start). */
    async restart(env: Record<string, string> = {}) {
      await service.close();
      service = await startService(config(env), { clock: options.clock, wrapStore: options.wrapStore, log: options.log });
    },
    async events(streamPrefix?: string) {
      const all = await service.deps.store.readAll({ after: 0, limit: 1_000_000 });
      return streamPrefix ? all.filter((e) => e.streamName.startsWith(streamPrefix)) : all;
    },
    async close() {
      await service.close();
      await sim.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}

export type Harness = Awaited<ReturnType<typeof startHarness>>;

/** A harness with these settings for one test, closed afterwards whatever happens. */
export async function withHarness(env: Record<string, string>, run: (h: Harness) => Promise<void>): Promise<void> {
  const h = await startHarness({ env });
  try {
    await run(h);
  } finally {
    await h.close();
  }
}
