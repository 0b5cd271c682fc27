// A pushed message as the realtime actors take it: a client's actor for a replay, a user's actor
// live (clientActor.ts, userActor.ts). Both keep `lastId`, the highest id they sent.
import type { Frame } from './clientActor.js';

export type MessageEvent = { type: 'MESSAGE'; position: number; appId: string; name: string; data: Record<string, unknown> };

const asMessage = (event: { type: string }): MessageEvent => {
  if (event.type !== 'MESSAGE') throw new Error(`a message action on ${event.type}`);
  return event as MessageEvent;
};

/** Guard: the message is above the highest id sent so far. */
export const isUnseen = ({ context, event }: { context: { lastId: number }; event: { type: string } }) =>
  event.type === 'MESSAGE' && (event as MessageEvent).position > context.lastId;

/** Assigner: the message's id is now the highest sent. */
export const recordMessage = ({ event }: { event: { type: string } }) => ({ lastId: asMessage(event).position });

/** The message's frame, its id the push's log position. */
export const messageFrame = ({ event }: { event: { type: string } }): Frame => {
  const { position, appId, name, data } = asMessage(event);
  return { type: 'message', id: position, data: { app_id: appId, name, data } };
};
