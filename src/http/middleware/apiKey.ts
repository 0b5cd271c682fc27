// The `apiKey` header is checked in order — exists, enabled, not expired — (401 for any of these)
// and then for the endpoint's permission (403, naming it in `X-Missing-Permission`), as docs/api.md says.
import type { Middleware } from 'koa';
import { InvalidApiKeyError, PermissionDeniedError } from '../../domain/errors.js';
import type { Actor } from '../../domain/events.js';
import { allows, type Permission } from '../../domain/permissions.js';
import type { ApiKeyRecord, ApiKeysReadModel } from '../../projections/apiKeys.js';
import { hashApiKey } from '../../services/apiKeys.js';
import type { Clock } from '../../system/clock.js';
import type { WorkState } from './requestLog.js';

export interface AuthState {
  /** `allApps`: the key reaches every app's records, not only its own app's. */
  actor: Actor & { app: string; allApps: boolean };
  /** The authenticated key. */
  apiKey: ApiKeyRecord;
}

/**
 * Hashes of the keys that passed, by the key presented: an app presents the same key on every
 * request, and its SHA-256 would be most of the check's work. A key that fails leaves the
 * table at once, so unknown, disabled, revoked and expired keys all take the same path (a caller
 * learns nothing about which keys exist); the whole table is dropped when full.
 */
const passedHashes = new Map<string, string>();
const PASSED_HASHES_MAX = 1000;

/** The key presented in the `apiKey` header, if it exists, is enabled and has not expired. */
export function authenticate(keys: ApiKeysReadModel, clock: Clock, presented: string): ApiKeyRecord {
  const passed = presented ? passedHashes.get(presented) : undefined;
  const key = presented ? keys.byHash(passed ?? hashApiKey(presented)) : undefined;
  if (key?.status !== 'enabled' || (key.expires !== null && key.expires <= clock.now())) {
    if (passed !== undefined) passedHashes.delete(presented);
    throw new InvalidApiKeyError();
  }
  if (passed === undefined) {
    if (passedHashes.size >= PASSED_HASHES_MAX) passedHashes.clear();
    passedHashes.set(presented, key.hash);
  }
  return key;
}

export function requirePermission(keys: ApiKeysReadModel, clock: Clock, permission: Permission): Middleware<AuthState & WorkState> {
  return (ctx, next) => {
    const key = authenticate(keys, clock, ctx.get('apikey'));
    if (!allows(key.permissions, permission)) throw new PermissionDeniedError(permission);
    ctx.state.apiKey = key;
    ctx.state.actor = { appId: key.appId, keyId: key.keyId, app: key.app, allApps: key.allApps };
    // What the request appends names the app and key.
    ctx.state.work.asApp(key.appId, key.keyId);
    return next();
  };
}
