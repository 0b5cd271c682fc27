// What an event's metadata says of where it came from: the request (its X-Request-Id), who made
// it (an app's key, or an operator), the node that appended it, and the event that caused it.
// Written by the one write path (src/services/commandHandler.ts); read back leniently, because
// the log also holds events with no metadata at all. No I/O: the console's pages use it too.

/** Every text in metadata is at most this long, so that an event's metadata stays small. */
export const METADATA_TEXT_MAX = 128;

// A type alias, not an interface: so it is an event's metadata record (Record<string, unknown>) as it is.
export type EventMetadata = {
  /** The request's X-Request-Id: the caller's, or one the service made up. */
  requestId?: string;
  /** The app whose API key made the request, and the key. */
  appId?: string;
  keyId?: string;
  /** A person acting as operator: `console:<oId>` in the console, an OS user at the CLI. */
  operator?: string;
  /** NODE_ID of the process that appended the event. */
  nodeId?: string;
  /** Global position of the event that caused this one (an outcome names its intent). */
  causationId?: number;
};

const TEXTS = ['requestId', 'appId', 'keyId', 'operator', 'nodeId'] as const;

/** Every field, in the order a context builds them (src/system/workContext.ts). */
export const METADATA_FIELDS = [...TEXTS, 'causationId'] as const satisfies readonly (keyof EventMetadata)[];

export const clipText = (text: string): string => (text.length > METADATA_TEXT_MAX ? text.slice(0, METADATA_TEXT_MAX) : text);

/** The fields this service writes, from whatever metadata a recorded event carries (bounded). */
export function readEventMetadata(metadata: Record<string, unknown> | null | undefined): EventMetadata {
  const read: EventMetadata = {};
  if (!metadata) return read;
  for (const name of TEXTS) {
    const value = metadata[name];
    if (typeof value === 'string') read[name] = clipText(value);
  }
  const cause = metadata.causationId;
  if (typeof cause === 'number' && Number.isSafeInteger(cause) && cause > 0) read.causationId = cause;
  return read;
}

/** The request id a recorded event carries, if any. */
export function requestIdOf(metadata: Record<string, unknown> | null | undefined): string | undefined {
  const value = metadata?.requestId;
  return typeof value === 'string' ? clipText(value) : undefined;
}

/** `name=value` pairs for a person, in a fixed order: `request=trace-123 app=game-one key=k1 node=a`. */
export function metadataPairs(metadata: EventMetadata): [name: string, value: string][] {
  const pairs: [string, string][] = [];
  if (metadata.requestId !== undefined) pairs.push(['request', metadata.requestId]);
  if (metadata.appId !== undefined) pairs.push(['app', metadata.appId]);
  if (metadata.keyId !== undefined) pairs.push(['key', metadata.keyId]);
  if (metadata.operator !== undefined) pairs.push(['operator', metadata.operator]);
  if (metadata.nodeId !== undefined) pairs.push(['node', metadata.nodeId]);
  if (metadata.causationId !== undefined) pairs.push(['cause', `#${metadata.causationId}`]);
  return pairs;
}
