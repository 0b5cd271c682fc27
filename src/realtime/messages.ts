// A pushed message as the realtime machines and actors take it: a client's machine for a replay, a user's actor
// live (clientActor.ts, userActor.ts). Both keep `lastId`, the highest id they sent. The machine
// narrows its events with XState's `assertEvent` before it calls these.
import type { LiveFrame } from './replay.js';

export type PushedMessage = { type: 'MESSAGE'; position: number; appId: string; name: string; data: Record<string, unknown> };

/** The message is above the highest id sent so far. */
export const isUnseen = (context: { lastId: number }, event: PushedMessage) => event.position > context.lastId;

/** The message's frame, its id the push's log position. */
export const messageFrame = ({ position, appId, name, data }: PushedMessage): LiveFrame => ({ type: 'message', id: position, data: { app_id: appId, name, data } });
