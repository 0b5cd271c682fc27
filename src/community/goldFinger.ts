// The platform's admin ("gold finger") keys, one per operation type, and what their absence means
// to an operator: a setting to fix, named as the configuration names it.
import { NotConfiguredError } from '../domain/errors.js';

/** The platform issues one gold-finger key per type; an operator may hold one key for all. */
export type GoldFingerType = 'point' | 'metal' | 'item' | 'liveness';
export type GoldFingerKeys = Partial<Record<GoldFingerType, string>>;

const WHAT: Record<GoldFingerType, string> = { point: 'points edits', metal: 'medals', item: 'items', liveness: 'liveness' };

export function missingKeyError(type: GoldFingerType): NotConfiguredError {
  return new NotConfiguredError(
    `The community platform's gold-finger key for ${WHAT[type]} is not set on this service: set COMMUNITY_KEY (or COMMUNITY_KEY_${type.toUpperCase()}) and restart it`,
  );
}

/** One line for operators (start-up, /readyz) naming the settings that are missing, if any. */
export function missingKeysWarning(keys: GoldFingerKeys): string | undefined {
  const missing = (Object.keys(WHAT) as GoldFingerType[]).filter((type) => !keys[type]);
  if (missing.length === 0) return undefined;
  return `COMMUNITY_KEY is not set${missing.length < 4 ? ` for ${missing.map((t) => `COMMUNITY_KEY_${t.toUpperCase()}`).join(', ')}` : ''}: ${missing.map((t) => WHAT[t]).join(', ')} answer 503 until it is`;
}
