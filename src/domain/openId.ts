// A positive OpenID 2.0 assertion read the way a relying party must (OpenID 2.0 §4.1.1, §10.1,
// §11.4; docs/architecture.md, "Realtime"). The platform signs the `key:value` lines of the
// fields `openid.signed` names and checks nothing else about that list, so this side insists
// that the list covers the identity and everything bound to this attempt, and that no name or
// value could add lines of its own to the signed text.
import { OID_PATTERN, OID_RULE } from './user.js';

export const OPENID_NS = 'http://specs.openid.net/auth/2.0';

/** What a positive assertion must sign (§10.1). */
export const REQUIRED_SIGNED = ['op_endpoint', 'return_to', 'response_nonce', 'assoc_handle', 'claimed_id', 'identity'] as const;

/** A field name after `openid.`: dot-separated words, so no newline, colon or comma (§4.1.1, §12). */
const FIELD = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;
/** No legitimate assertion comes close; a bigger one is refused before anything is forwarded. */
const MAX_FIELDS = 64;
const MAX_VALUE_LENGTH = 4096;

export interface AssertionExpectations {
  /** `openid.op_endpoint` must be exactly this. */
  opEndpoint: string;
  /** `openid.identity` must match; its first group is the oId. */
  identityPattern: RegExp;
  /** The return_to this service issued for the attempt. */
  returnTo: string;
}

export type AssertionReading =
  | { ok: true; oId: string /** Every `openid.*` field received, to forward to the verification as is. */; fields: Record<string, string> }
  | { ok: false; problem: string };

type Query = Record<string, string | string[] | undefined>;

export function readAssertion(query: Query, expected: AssertionExpectations): AssertionReading {
  const refuse = (problem: string): AssertionReading => ({ ok: false, problem });
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (!name.startsWith('openid.')) continue;
    if (!FIELD.test(name.slice('openid.'.length))) return refuse('a parameter name is not an OpenID field name');
    if (typeof value !== 'string') return refuse(`${name} is repeated`);
    if (/[\r\n]/.test(value) || value.length > MAX_VALUE_LENGTH) return refuse(`${name} holds a newline or is too long`);
    fields[name] = value;
  }
  if (Object.keys(fields).length > MAX_FIELDS) return refuse('too many openid fields');

  const field = (name: string) => fields[`openid.${name}`];
  if (field('ns') !== OPENID_NS) return refuse('openid.ns is not OpenID 2.0');
  if (field('mode') !== 'id_res') return refuse(`openid.mode is ${field('mode') ?? 'missing'}, not id_res`);
  if (field('op_endpoint') !== expected.opEndpoint) return refuse('openid.op_endpoint is not the platform');
  const identity = field('identity');
  if (!identity || identity !== field('claimed_id')) return refuse('openid.identity and openid.claimed_id differ');
  const oId = expected.identityPattern.exec(identity)?.[1];
  if (!oId) return refuse('openid.identity is not an identity of the platform');
  if (!OID_PATTERN.test(oId)) return refuse(`openid.identity names no user id the platform issues (${OID_RULE})`);
  if (field('return_to') !== expected.returnTo) return refuse('openid.return_to is not the one issued');
  if (!field('sig')) return refuse('openid.sig is missing');

  const signed = (field('signed') ?? '').split(',');
  if (new Set(signed).size !== signed.length) return refuse('openid.signed names a field twice');
  const unknown = signed.find((name) => !FIELD.test(name) || field(name) === undefined);
  if (unknown !== undefined) return refuse('openid.signed names a field that was not received');
  const unsigned = REQUIRED_SIGNED.filter((name) => !signed.includes(name));
  if (unsigned.length > 0) return refuse(`openid.signed leaves out ${unsigned.join(', ')}`);
  return { ok: true, oId, fields };
}
