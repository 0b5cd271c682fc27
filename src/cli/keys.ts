import { AppError, ValidationError } from '../domain/errors.js';
import type { WorkContext } from '../system/workContext.js';
import { isGrant, PERMISSIONS, type Grant } from '../domain/permissions.js';
import { parseSpecDateTime, toSpecTimestamp } from '../domain/time.js';
import type { ApiKeyRecord } from '../projections/apiKeys.js';
import type { ApiKeyService } from '../services/apiKeys.js';
import { escapeControl, table } from './table.js';

type Print = (text: string) => void;

function parsePermissions(text: string | undefined): Grant[] {
  if (!text) throw new ValidationError(`--permissions: required (comma-separated from: ${PERMISSIONS.join(', ')}, or *)`);
  const grants = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const unknown = grants.filter((g) => !isGrant(g));
  if (unknown.length > 0 || grants.length === 0) {
    throw new ValidationError(`--permissions: unknown permission ${unknown.join(', ') || '(none)'}; known: ${PERMISSIONS.join(', ')}, or *`);
  }
  return [...new Set(grants)] as Grant[];
}

function parseExpiry(text: string | undefined, now: string): string | null {
  if (text === undefined) return null;
  const iso = parseSpecDateTime(text);
  if (!iso) throw new ValidationError('--expires: must be a real date and time written "YYYY-MM-DD HH:MM:SS" (UTC)');
  if (iso <= now) throw new ValidationError('--expires: must be in the future');
  return iso;
}

const expiryText = (expires: string | null) => (expires === null ? null : toSpecTimestamp(expires));

function describe(key: ApiKeyRecord) {
  return {
    id: key.keyId,
    appId: key.appId,
    app: key.app,
    permissions: key.permissions,
    allApps: key.allApps,
    status: key.status,
    expires: expiryText(key.expires),
    created: toSpecTimestamp(key.created),
  };
}

export async function keysCommand(
  service: ApiKeyService,
  /** Who runs the command: what it appends names them. */
  work: WorkContext,
  args: string[],
  options: { app?: string; 'app-id'?: string; 'all-apps'?: boolean; permissions?: string; expires?: string; json?: boolean },
  print: Print,
): Promise<void> {
  const [action, id] = args;
  switch (action) {
    case 'create': {
      const permissions = parsePermissions(options.permissions);
      const expires = parseExpiry(options.expires, new Date().toISOString());
      const issued = await service.issue(work, { appId: options['app-id'], app: options.app, permissions, expires, allApps: options['all-apps'] }).catch((error: unknown) => {
        // The service names its inputs as the API does; here they are flags.
        if (error instanceof AppError)
          error.message = error.message
            .replace(/^appId:/, '--app-id:')
            .replace(/^app:/, '--app:')
            .replace(/\bappId\b/g, '--app-id');
        throw error;
      });
      const shown = { ...issued, expires: expiryText(issued.expires) };
      if (options.json) return print(`${JSON.stringify(shown)}\n`);
      return print(
        `Created key ${issued.id} for app "${escapeControl(issued.app)}" (app id ${issued.appId})\n` +
          `Permissions: ${issued.permissions.join(', ')}${issued.allApps ? " (every app's records)" : ''}\nExpires: ${shown.expires ?? 'never'}\n\n` +
          `  ${issued.key}\n\nThis is the only time the key is shown; only its hash is stored.\n`,
      );
    }
    case 'list': {
      const keys = service.list().map(describe);
      if (options.json) return print(`${JSON.stringify(keys)}\n`);
      if (keys.length === 0) return print('No API keys yet. Create one with: keys create --app-id <id> --app <name> --permissions <p1,p2|*>\n');
      return print(
        table([
          ['ID', 'APP', 'APP ID', 'REACH', 'STATUS', 'EXPIRES', 'PERMISSIONS'],
          ...keys.map((k) => [k.id, k.app, k.appId, k.allApps ? 'all apps' : 'own app', k.status, k.expires ?? 'never', k.permissions.join(',')]),
        ]),
      );
    }
    case 'disable':
    case 'enable':
    case 'revoke': {
      if (!id) throw new ValidationError(`keys ${action}: the key id is required`);
      const key = await service[action](work, id);
      if (options.json) return print(`${JSON.stringify(describe(key))}\n`);
      return print(`Key ${key.keyId} (${escapeControl(key.app)}) is ${key.status}\n`);
    }
    default:
      throw new ValidationError(`keys: unknown action "${action ?? ''}" (create, list, disable, enable, revoke)`);
  }
}
