// The life of one API key: issued → (disabled ⇄ enabled) → revoked. Revocation is final. A key
// belongs to one app, named by an exact id chosen when its first key is issued.

/** An app id: what Idempotency-Keys, stored answers, audits and operations are kept apart by. */
export const APP_ID = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
export const APP_ID_RULE = '1 to 64 of a-z 0-9 _ . - starting with a letter or digit';
import type { Decider } from './decider.js';
import { ConflictError, NotFoundError } from './errors.js';
import type { ApiKeyEvent, Operator } from './events.js';
import type { Grant } from './permissions.js';

export type ApiKeyStatus = 'enabled' | 'disabled' | 'revoked';

export type ApiKeyState =
  | { exists: false }
  | {
      exists: true;
      keyId: string;
      appId: string;
      app: string;
      hash: string;
      permissions: Grant[];
      expires: string | null;
      /** Reaches every app's records, not only its own app's. */
      allApps: boolean;
      status: ApiKeyStatus;
      created: string;
    };

type By = { by?: Operator };
export type ApiKeyCommand =
  | ({ type: 'IssueApiKey'; keyId: string; appId: string; app: string; hash: string; permissions: Grant[]; expires: string | null; allApps?: true; at: string } & By)
  | ({ type: 'DisableApiKey'; keyId: string; at: string } & By)
  | ({ type: 'EnableApiKey'; keyId: string; at: string } & By)
  | ({ type: 'RevokeApiKey'; keyId: string; at: string } & By)
  | { type: 'ChangeApiKeyExpiry'; keyId: string; expires: string | null; at: string };

function existing(state: ApiKeyState, keyId: string) {
  if (!state.exists) throw new NotFoundError(`No API key with id ${keyId}`);
  if (state.status === 'revoked') throw new ConflictError(`API key ${keyId} is revoked`);
  return state;
}

const change = ({ keyId, at, by }: { keyId: string; at: string } & By) => ({ keyId, at, ...(by && { by }) });

export const apiKeyDecider: Decider<ApiKeyState, ApiKeyCommand, ApiKeyEvent> = {
  initialState: () => ({ exists: false }),

  decide(command, state) {
    switch (command.type) {
      case 'IssueApiKey': {
        if (state.exists) throw new ConflictError(`API key ${command.keyId} already exists`);
        const { type: _, ...data } = command;
        return [{ type: 'ApiKeyIssued', data }];
      }
      case 'DisableApiKey':
        // Asking twice is not an error: the key is disabled either way, and the log stays quiet.
        return existing(state, command.keyId).status === 'disabled' ? [] : [{ type: 'ApiKeyDisabled', data: change(command) }];
      case 'EnableApiKey':
        return existing(state, command.keyId).status === 'enabled' ? [] : [{ type: 'ApiKeyEnabled', data: change(command) }];
      case 'RevokeApiKey':
        if (state.exists && state.status === 'revoked') return [];
        existing(state, command.keyId);
        return [{ type: 'ApiKeyRevoked', data: change(command) }];
      case 'ChangeApiKeyExpiry':
        return existing(state, command.keyId).expires === command.expires
          ? []
          : [{ type: 'ApiKeyExpiryChanged', data: { keyId: command.keyId, expires: command.expires, at: command.at } }];
    }
  },

  evolve(state, event) {
    if (event.type === 'ApiKeyIssued') {
      const { at, by: _, allApps, ...rest } = event.data;
      return { exists: true, ...rest, allApps: allApps === true, status: 'enabled', created: at };
    }
    if (!state.exists) return state;
    switch (event.type) {
      case 'ApiKeyDisabled':
        return { ...state, status: 'disabled' };
      case 'ApiKeyEnabled':
        return { ...state, status: 'enabled' };
      case 'ApiKeyRevoked':
        return { ...state, status: 'revoked' };
      case 'ApiKeyExpiryChanged':
        return { ...state, expires: event.data.expires };
    }
  },
};
