// The user object of the connection and login events (docs/api.md, `GET /api/realtime`). The platform gives no email
// and no verification flag; docs/decisions.md records the values chosen for those fields.
import type * as v from 'valibot';
import type { RealtimeUser } from '../contract/answers.js';
import { toSpecTimestamp } from '../domain/time.js';
import type { UserRecord } from '../projections/users.js';

export type SpecUser = v.InferOutput<typeof RealtimeUser>;

/** PocketBase's id and name of its built-in users collection, which the replaced service used. */
export const USERS_COLLECTION = { collectionId: '_pb_users_auth_', collectionName: 'users' } as const;

export function toSpecUser(user: UserRecord): SpecUser {
  return {
    id: user.id,
    oId: user.oId,
    name: user.name,
    nickname: user.nickname,
    avatar: user.avatar,
    email: '',
    emailVisibility: false,
    // The platform vouched for the account through OpenID: it is verified.
    verified: true,
    ...USERS_COLLECTION,
    created: toSpecTimestamp(user.created),
    updated: toSpecTimestamp(user.updated),
  };
}

/** Whether `spec` is what toSpecUser makes of `user` now (the read model changes records in place). */
export function isSpecUserOf(spec: SpecUser, user: UserRecord): boolean {
  return (
    spec.id === user.id &&
    spec.oId === user.oId &&
    spec.name === user.name &&
    spec.nickname === user.nickname &&
    spec.avatar === user.avatar &&
    spec.created === toSpecTimestamp(user.created) &&
    spec.updated === toSpecTimestamp(user.updated)
  );
}

/** The `/adm/user/get` form: only these four fields (docs/api.md, `GET /adm/user/get`). */
export function toLookupUser(user: UserRecord): { avatar: string; name: string; nickname: string; oId: string } {
  return { avatar: user.avatar, name: user.name, nickname: user.nickname, oId: user.oId };
}
