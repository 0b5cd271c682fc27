// The permissions an API key can hold, one per endpoint group, and `*` for all of them.
export const PERMISSIONS = [
  'points:edit',
  'medal:give',
  'medal:remove',
  'items:query',
  'items:edit',
  'liveness:read',
  'vip:read',
  'vip:write',
  'message:push',
  'user:get',
  'audit:read',
  'operations:resolve',
  'webhooks:manage',
  'presence:read',
] as const;

export type Permission = (typeof PERMISSIONS)[number];
export type Grant = Permission | '*';

export function isGrant(text: string): text is Grant {
  return text === '*' || (PERMISSIONS as readonly string[]).includes(text);
}

export function allows(grants: readonly Grant[], needed: Permission): boolean {
  return grants.includes('*') || grants.includes(needed);
}
