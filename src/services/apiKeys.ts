// Issuing and managing API keys. The clear key is returned once, by issue(); the store keeps
// only its SHA-256 hash (keys carry 160 bits of CSPRNG entropy, so a fast hash is enough).
import { hash, randomBytes } from 'node:crypto';
import { APP_ID, APP_ID_RULE, apiKeyDecider, type ApiKeyCommand } from '../domain/apiKey.js';
import { ConflictError, ValidationError } from '../domain/errors.js';
import { streams, type Operator } from '../domain/events.js';
import type { Grant } from '../domain/permissions.js';
import type { ApiKeyRecord, ApiKeysReadModel } from '../projections/apiKeys.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { EventStore } from '../store/port.js';
import { handleCommand } from './commandHandler.js';
import type { WorkContext } from '../system/workContext.js';
import type { Clock } from '../system/clock.js';
import { newRecordId } from '../system/ids.js';

export const KEY_PREFIX = 'cbk_';

export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** The id a name would fold to (lower case, runs of other characters as '-'): only ever suggested. */
function foldedId(app: string): string {
  return app
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^[-_.]+|-+$/g, '')
    .slice(0, 64);
}

export interface NewKey {
  /** The app's exact id: an existing app's, or a new one's. */
  appId?: string | undefined;
  /** The app's name, for a new app (an existing app keeps its own). */
  app?: string | undefined;
  permissions: Grant[];
  expires: string | null;
  /** The key reaches every app's records (audits, resolutions), not only its own app's. */
  allApps?: boolean | undefined;
}

export interface IssuedKey {
  id: string;
  key: string;
  appId: string;
  app: string;
  permissions: Grant[];
  expires: string | null;
  allApps: boolean;
}

export class ApiKeyService {
  constructor(private readonly deps: { store: EventStore; runner: ProjectionRunner; keys: ApiKeysReadModel; clock: Clock }) {}

  /** `by`: the operator issuing it, recorded with each change (the console names its operator). */
  async issue(work: WorkContext, input: NewKey, by?: Operator): Promise<IssuedKey> {
    const { appId, app } = this.appOf(input);
    const id = newRecordId();
    const key = KEY_PREFIX + randomBytes(20).toString('base64url');
    const allApps = input.allApps === true;
    await this.execute(work, {
      type: 'IssueApiKey',
      keyId: id,
      appId,
      app,
      hash: hashApiKey(key),
      permissions: input.permissions,
      expires: input.expires,
      ...(allApps && { allApps }),
      at: this.deps.clock.now(),
      ...(by && { by }),
    });
    return { id, key, appId, app, permissions: input.permissions, expires: input.expires, allApps };
  }

  /**
   * The app a new key belongs to. An app id is exact, chosen once: `appId` names an existing app
   * (its name may be left out) or a new one (`app` its name, else the id); a name alone is the id
   * only when it already is a valid id, and is never folded into one, so "Game A" and "game a"
   * cannot end up as one app without anyone saying so.
   */
  private appOf({ appId, app }: Pick<NewKey, 'appId' | 'app'>): { appId: string; app: string } {
    const name = app?.trim();
    if (appId !== undefined) {
      if (!APP_ID.test(appId)) throw new ValidationError(`appId: must be ${APP_ID_RULE}`);
      const existing = this.deps.keys.appName(appId);
      if (existing !== undefined) {
        if (name && name !== existing)
          throw new ConflictError(`appId: app ${appId} exists already, named "${existing}"; leave the name out to add a key to it, or choose another app id`);
        return { appId, app: existing };
      }
      return { appId, app: name || appId };
    }
    if (!name) throw new ValidationError('app: required (the application the key belongs to), or appId for an existing app');
    if (APP_ID.test(name)) return { appId: name, app: this.deps.keys.appName(name) ?? name };
    const suggestion = foldedId(name);
    const taken = suggestion ? this.deps.keys.appName(suggestion) : undefined;
    if (taken !== undefined) {
      throw new ConflictError(
        `app: "${name}" is not an app id, and the id it suggests, ${suggestion}, is the existing app "${taken}": name that app by its id to add a key to it, or give the new app an id of its own (appId)`,
      );
    }
    throw new ValidationError(`app: "${name}" is not an app id (${APP_ID_RULE}): give the app an id of its own with appId${suggestion ? `, e.g. ${suggestion}` : ''}`);
  }

  disable(work: WorkContext, keyId: string, by?: Operator) {
    return this.execute(work, { type: 'DisableApiKey', keyId, at: this.deps.clock.now(), ...(by && { by }) });
  }

  enable(work: WorkContext, keyId: string, by?: Operator) {
    return this.execute(work, { type: 'EnableApiKey', keyId, at: this.deps.clock.now(), ...(by && { by }) });
  }

  revoke(work: WorkContext, keyId: string, by?: Operator) {
    return this.execute(work, { type: 'RevokeApiKey', keyId, at: this.deps.clock.now(), ...(by && { by }) });
  }

  changeExpiry(work: WorkContext, keyId: string, expires: string | null) {
    return this.execute(work, { type: 'ChangeApiKeyExpiry', keyId, expires, at: this.deps.clock.now() });
  }

  list(): ApiKeyRecord[] {
    return this.deps.keys.list();
  }

  private async execute(work: WorkContext, command: ApiKeyCommand): Promise<ApiKeyRecord> {
    const { position } = await handleCommand(work, this.deps.store, streams.apiKey(command.keyId), apiKeyDecider, command);
    if (position !== undefined) await this.deps.runner.waitFor(position);
    return this.deps.keys.get(command.keyId)!;
  }
}
