// Issuing and managing API keys. The clear key is returned once, by issue(); the store keeps
// only its SHA-256 hash (keys carry 160 bits of CSPRNG entropy, so a fast hash is enough).
import { createHash, randomBytes } from 'node:crypto';
import { apiKeyDecider, type ApiKeyCommand } from '../domain/apiKey.js';
import { ValidationError } from '../domain/errors.js';
import { streams, type Operator } from '../domain/events.js';
import type { Grant } from '../domain/permissions.js';
import type { ApiKeyRecord, ApiKeysReadModel } from '../projections/apiKeys.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { EventStore } from '../store/port.js';
import { handleCommand } from './commandHandler.js';
import type { Clock } from '../system/clock.js';
import { newRecordId } from '../system/ids.js';

export const KEY_PREFIX = 'cbk_';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** App name → app id: lower-case [a-z0-9_.-], usable as the platform's `sourceAppId` as is. */
export function appIdOf(app: string): string {
  const id = app.trim().toLowerCase().replace(/[^a-z0-9_.-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 64);
  if (!id) throw new ValidationError('app: must contain at least one letter or digit');
  return id;
}

export interface IssuedKey {
  id: string;
  key: string;
  appId: string;
  app: string;
  permissions: Grant[];
  expires: string | null;
}

export class ApiKeyService {
  constructor(private readonly deps: { store: EventStore; runner: ProjectionRunner; keys: ApiKeysReadModel; clock: Clock }) {}

  /** `by`: the operator issuing it, recorded with each change (the console names its operator). */
  async issue(input: { app: string; permissions: Grant[]; expires: string | null }, by?: Operator): Promise<IssuedKey> {
    const app = input.app.trim();
    const id = newRecordId();
    const key = KEY_PREFIX + randomBytes(20).toString('base64url');
    const appId = appIdOf(app);
    await this.execute({ type: 'IssueApiKey', keyId: id, appId, app, hash: hashApiKey(key), permissions: input.permissions, expires: input.expires, at: this.deps.clock.now(), ...(by && { by }) });
    return { id, key, appId, app, permissions: input.permissions, expires: input.expires };
  }

  disable(keyId: string, by?: Operator) {
    return this.execute({ type: 'DisableApiKey', keyId, at: this.deps.clock.now(), ...(by && { by }) });
  }

  enable(keyId: string, by?: Operator) {
    return this.execute({ type: 'EnableApiKey', keyId, at: this.deps.clock.now(), ...(by && { by }) });
  }

  revoke(keyId: string, by?: Operator) {
    return this.execute({ type: 'RevokeApiKey', keyId, at: this.deps.clock.now(), ...(by && { by }) });
  }

  changeExpiry(keyId: string, expires: string | null) {
    return this.execute({ type: 'ChangeApiKeyExpiry', keyId, expires, at: this.deps.clock.now() });
  }

  list(): ApiKeyRecord[] {
    return this.deps.keys.list();
  }

  private async execute(command: ApiKeyCommand): Promise<ApiKeyRecord> {
    const { position } = await handleCommand(this.deps.store, streams.apiKey(command.keyId), apiKeyDecider, command);
    if (position !== undefined) await this.deps.runner.waitFor(position);
    return this.deps.keys.get(command.keyId)!;
  }
}
