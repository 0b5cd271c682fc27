// The platform's admin ("gold finger") keys, one per operation type, and what their absence means
// to an operator: a setting to fix, named as the configuration names it.
import { NotConfiguredError } from '../domain/errors.js';

/**
 * The platform issues one gold-finger key per type; an operator may hold one key for all. The
 * names are the platform's own (its medal endpoints are give-metal and remove-metal).
 */
export type GoldFingerType = 'point' | 'metal' | 'item' | 'liveness';
export type GoldFingerKeys = Partial<Record<GoldFingerType, string>>;

const WHAT: Record<GoldFingerType, string> = { point: 'points edits', metal: 'medals', item: 'items', liveness: 'liveness' };

/** The setting that holds one type's key where it differs from COMMUNITY_KEY, named in our words. */
const PER_TYPE_VARIABLE: Record<GoldFingerType, string> = {
  point: 'COMMUNITY_KEY_POINT',
  metal: 'COMMUNITY_KEY_MEDAL',
  item: 'COMMUNITY_KEY_ITEM',
  liveness: 'COMMUNITY_KEY_LIVENESS',
};
const perTypeVariable = (type: GoldFingerType) => PER_TYPE_VARIABLE[type];

export function missingKeyError(type: GoldFingerType): NotConfiguredError {
  return new NotConfiguredError(
    `COMMUNITY_KEY (or ${perTypeVariable(type)}), the community platform's gold-finger key for ${WHAT[type]}, is not set on this service: set either and restart the service`,
  );
}

/** One line for operators (start-up, /readyz) naming the settings that are missing, if any. */
export function missingKeysWarning(keys: GoldFingerKeys): string | undefined {
  const types = Object.keys(WHAT) as GoldFingerType[];
  const missing = types.filter((type) => !keys[type]);
  if (missing.length === 0) return undefined;
  const perType = missing.map(perTypeVariable).join('/');
  const unset = missing.length === types.length ? 'COMMUNITY_KEY is not set' : `COMMUNITY_KEY is not set, nor ${perType}`;
  return `${unset}: ${missing.map((t) => WHAT[t]).join(', ')} answer 503; set COMMUNITY_KEY, or ${perType}`;
}
