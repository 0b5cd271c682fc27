// The development reload stream: a `change` event each time a front-end file changes, to a
// signed-in console page (only with live reload: assets.ts). Held as a console stream (streams.ts)
// and for at most CHANGE_STREAM_LIFETIME_MS, after which the page's EventSource reconnects.
import type { ParameterizedContext } from 'koa';
import type { ConsoleAssets } from './assets.js';
import type { OperatorState } from './guards.js';
import type { ConsoleStreams } from './streams.js';

export const CHANGE_STREAM_LIFETIME_MS = 10 * 60_000;

export function changeStream(ctx: ParameterizedContext<OperatorState>, streams: ConsoleStreams, watchChanges: NonNullable<ConsoleAssets['watchChanges']>): void {
  const stream = streams.start(ctx, ': watching the console sources\n\n', CHANGE_STREAM_LIFETIME_MS);
  if (!stream) return;
  stream.onEnd(watchChanges(() => stream.send('event: change\ndata: \n\n')));
}
