import type { ParameterizedContext } from 'koa';
import type { AuthState } from '../middleware/apiKey.js';

/** Who asked, as recorded in the events an admin call causes. */
export const actorOf = (ctx: ParameterizedContext<AuthState>) => ({ appId: ctx.state.actor.appId, keyId: ctx.state.actor.keyId });
