// API keys: the list with each key's state and last recorded use; create (the secret is in this
// answer only), disable, enable, revoke — each recorded with the operator as `by`.
import { ValidationError } from '../../domain/errors.js';
import { parseSpecDateTime } from '../../domain/time.js';
import { KeyActionParams, KeyCreateBody, type KeyCreated, type KeyList, type KeyView } from '../../contract/console.js';
import type { ApiKeyRecord } from '../../projections/apiKeys.js';
import { invalid } from '../../http/validation.js';
import { consoleOperator } from '../operator.js';
import type { ConsoleDeps } from '../deps.js';
import type { IssuedKey } from '../../services/apiKeys.js';
import { consoleRoute } from './consoleRoute.js';

function keyView(key: ApiKeyRecord, { index, clock }: ConsoleDeps): KeyView {
  const expired = key.status === 'enabled' && key.expires !== null && key.expires <= clock.now();
  return {
    id: key.keyId,
    app: key.app,
    appId: key.appId,
    permissions: key.permissions,
    allApps: key.allApps,
    status: expired ? 'expired' : key.status,
    created: key.created,
    expires: key.expires,
    lastUsed: index.lastUsed(key.keyId) ?? null,
  };
}

function expiryOf(text: string | null, now: string): string | null {
  if (text === null || text === '') return null;
  const iso = parseSpecDateTime(text);
  if (!iso) throw invalid('expires', 'must be a real date and time written "YYYY-MM-DD HH:MM:SS" (UTC)');
  if (iso <= now) throw invalid('expires', 'must be in the future');
  return iso;
}

export const keyEndpoints = [
  consoleRoute({
    method: 'get',
    path: '/console/api/keys',
    handle: (_ctx, _input, deps): KeyList => ({ keys: deps.keys.list().map((key) => keyView(key, deps)) }),
  }),
  consoleRoute({
    method: 'post',
    path: '/console/api/keys',
    body: KeyCreateBody,
    async handle(ctx, { body }, deps): Promise<KeyCreated> {
      const permissions = [...new Set(body.permissions)];
      let issued: IssuedKey;
      try {
        const input = { appId: body.appId || undefined, app: body.app || undefined, permissions, expires: expiryOf(body.expires, deps.clock.now()), allApps: body.allApps };
        issued = await deps.keys.issue(ctx.state.work, input, consoleOperator(ctx.state.operator.oId));
      } catch (error) {
        // The service names the field it refuses (`appId: …`, `app: …`): the form marks that one.
        const field = error instanceof ValidationError ? /^(appId|app): /.exec(error.message)?.[1] : undefined;
        if (field) throw invalid(field, error instanceof Error ? error.message.slice(field.length + 2) : '');
        throw error;
      }
      return { key: keyView(deps.readModels.apiKeys.get(issued.id)!, deps), secret: issued.key };
    },
  }),
  consoleRoute({
    method: 'post',
    path: '/console/api/keys/:keyId/:action',
    params: KeyActionParams,
    async handle(ctx, { params: { keyId, action } }, deps): Promise<KeyView> {
      return keyView(await deps.keys[action](ctx.state.work, keyId, consoleOperator(ctx.state.operator.oId)), deps);
    },
  }),
];
