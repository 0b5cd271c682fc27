// The context of the work in progress — the node, and for a request its id and the app and key
// or the operator behind it — kept by AsyncLocalStorage, so that the one write path stamps every
// event it appends (src/services/commandHandler.ts) without handlers and services passing it
// along. Work a node starts on its own (sweeps, retention, heartbeats) carries the node only.
//
// A request's context also remembers where the request last appended to each stream: its next
// event there names that one as its cause (a platform outcome names its intent).
import { AsyncLocalStorage } from 'node:async_hooks';
import { clipText, type EventMetadata } from './eventMetadata.js';

interface WorkContext {
  /**
   * Stamped on every event appended in this context: replaced whole (never changed in place) when
   * a request learns who made it, so events appended before keep what they were stamped with.
   */
  metadata: Readonly<EventMetadata>;
  /** A request's appends: stream → global position of its last event there; none for a node's own work. */
  readonly appended: Map<string, number> | undefined;
}

const storage = new AsyncLocalStorage<WorkContext>();

/** Streams a request remembers for causation; its appends to streams beyond these name no cause. */
const STREAMS_REMEMBERED = 32;

/** Runs `work` (and everything it starts: timers, subscriptions, a server's requests) as the node's. */
export function runAsNode<T>(nodeId: string, work: () => T): T {
  return storage.run({ metadata: { nodeId: clipText(nodeId) }, appended: undefined }, work);
}

/** Runs `work` as the request `requestId` (a valid X-Request-Id), on the node it runs on, if any. */
export function runAsRequest<T>(requestId: string, work: () => T): T {
  const nodeId = storage.getStore()?.metadata.nodeId;
  const metadata: EventMetadata = { requestId: clipText(requestId) };
  if (nodeId !== undefined) metadata.nodeId = nodeId;
  return storage.run({ metadata, appended: new Map() }, work);
}

/** Runs `work` as the current request, made with this app's key (a request's context keeps it from then on). */
export function runAsApp<T>(appId: string, keyId: string, work: () => T): T {
  return within({ appId: clipText(appId), keyId: clipText(keyId) }, work);
}

/** Runs `work` as the current request (if any), made by this operator (a request's context keeps it from then on). */
export function runAsOperator<T>(operator: string, work: () => T): T {
  return within({ operator: clipText(operator) }, work);
}

function within<T>(fields: EventMetadata, work: () => T): T {
  const current = storage.getStore();
  // A request's context is that request's alone, and who made it is learnt once, before anything
  // of it is appended: the context takes it in place, sparing every request a second context.
  if (current?.appended !== undefined) {
    current.metadata = { ...current.metadata, ...fields };
    return work();
  }
  return storage.run({ metadata: { ...current?.metadata, ...fields }, appended: current?.appended }, work);
}

/**
 * What events appended now to `streamName` carry: the context's fields, and as cause the
 * request's last event on that stream. Undefined outside any context (the events carry none).
 */
export function metadataFor(streamName: string): Readonly<EventMetadata> | undefined {
  const context = storage.getStore();
  if (!context) return undefined;
  const cause = context.appended?.get(streamName);
  return cause === undefined ? context.metadata : { ...context.metadata, causationId: cause };
}

/**
 * The current request appended to `streamName`, its last event there at `position` (undefined:
 * at a position not known, so nothing there is taken as the cause of what follows).
 */
export function noteAppended(streamName: string, position: number | undefined): void {
  const appended = storage.getStore()?.appended;
  if (!appended) return;
  if (position === undefined) appended.delete(streamName);
  else if (appended.size < STREAMS_REMEMBERED || appended.has(streamName)) appended.set(streamName, position);
}
