import { apiKeyDecider, type ApiKeyState } from '../domain/apiKey.js';
import type { ApiKeyEvent } from '../domain/events.js';
import type { RecordedEvent } from '../store/port.js';
import type { Projection } from './runner.js';

export type ApiKeyRecord = Extract<ApiKeyState, { exists: true }>;

interface ApiKeysState {
  byId: Map<string, ApiKeyRecord>;
  idByHash: Map<string, string>;
}

/** API keys by id and by the SHA-256 hash of the key, for authentication. */
export class ApiKeysReadModel implements Projection {
  readonly name = 'api-keys';
  readonly version = 1;
  readonly handles = ['ApiKeyIssued', 'ApiKeyDisabled', 'ApiKeyEnabled', 'ApiKeyRevoked', 'ApiKeyExpiryChanged'] as const;
  private byId = new Map<string, ApiKeyRecord>();
  private idByHash = new Map<string, string>();

  apply(event: RecordedEvent): void {
    if (!event.type.startsWith('ApiKey')) return;
    const keyEvent = event as unknown as ApiKeyEvent;
    const before: ApiKeyState = this.byId.get(keyEvent.data.keyId) ?? apiKeyDecider.initialState();
    const after = apiKeyDecider.evolve(before, keyEvent);
    if (!after.exists) return;
    this.byId.set(after.keyId, after);
    this.idByHash.set(after.hash, after.keyId);
  }

  snapshotState(): ApiKeysState {
    return { byId: this.byId, idByHash: this.idByHash };
  }

  restoreState(state: ApiKeysState): boolean {
    ({ byId: this.byId, idByHash: this.idByHash } = state);
    return true;
  }

  byHash(hash: string): ApiKeyRecord | undefined {
    const id = this.idByHash.get(hash);
    return id === undefined ? undefined : this.byId.get(id);
  }

  get(keyId: string): ApiKeyRecord | undefined {
    return this.byId.get(keyId);
  }

  list(): ApiKeyRecord[] {
    return [...this.byId.values()].sort((a, b) => a.created.localeCompare(b.created));
  }

  /** The name an app was given with its first key, by app id; undefined for no such app. */
  appName(appId: string): string | undefined {
    for (const key of this.byId.values()) if (key.appId === appId) return key.app;
    return undefined;
  }
}
