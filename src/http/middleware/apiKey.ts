// Spec §5: the `apiKey` header is checked in order — exists, enabled, not expired — (401 for any
// of these) and then for the endpoint's permission (403).
import type { Middleware } from 'koa';
import { InvalidApiKeyError, PermissionDeniedError } from '../../domain/errors.js';
import type { Actor } from '../../domain/events.js';
import { allows, type Permission } from '../../domain/permissions.js';
import type { ApiKeyRecord, ApiKeysReadModel } from '../../projections/apiKeys.js';
import { hashApiKey } from '../../services/apiKeys.js';
import type { Clock } from '../../system/clock.js';

export interface AuthState {
  actor: Actor & { app: string };
  /** The authenticated key. */
  apiKey: ApiKeyRecord;
}

/** The key presented in the `apiKey` header, if it exists, is enabled and has not expired. */
function authenticate(keys: ApiKeysReadModel, clock: Clock, presented: string): ApiKeyRecord {
  const key = presented ? keys.byHash(hashApiKey(presented)) : undefined;
  if (!key || key.status !== 'enabled' || (key.expires !== null && key.expires <= clock.now())) throw new InvalidApiKeyError();
  return key;
}

export function requirePermission(keys: ApiKeysReadModel, clock: Clock, permission: Permission): Middleware<AuthState> {
  return async (ctx, next) => {
    const key = authenticate(keys, clock, ctx.get('apikey'));
    if (!allows(key.permissions, permission)) throw new PermissionDeniedError();
    ctx.state.apiKey = key;
    ctx.state.actor = { appId: key.appId, keyId: key.keyId, app: key.app };
    await next();
  };
}
