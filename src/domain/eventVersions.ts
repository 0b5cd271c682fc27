// Older shapes of events, brought to the current shape as they are read. The log is never
// rewritten: an event keeps the shape the version that wrote it gave it, and every store adapter
// passes each event it decodes through `upcast`, so deciders, read models, the CLI and the
// console only ever see current shapes. Shapes only grow (fields are added, never renamed or given
// a new meaning), so an upcaster recognises an older event by what it lacks, and a current event
// passes through untouched (the same object): no version number is stored.

type EventData = Record<string, unknown>;
type Upcaster = (data: EventData) => EventData;

/**
 * The name of a claim recorded before claims had names: where and when it was taken, which is
 * as unique (one process takes one claim on a key at a time).
 */
export const unnamedClaim = (node: string | undefined, at: string) => `${node ?? ''}@${at}`;

const UPCASTERS = new Map<string, Upcaster>([
  [
    // Before `claim`, and before `epoch`: a claim without a name is named after its node and time,
    // and a use of the key without an epoch began with that claim.
    'IdempotentRequestStarted',
    (data) => {
      if (typeof data.claim === 'string' && typeof data.epoch === 'string') return data;
      const claim = typeof data.claim === 'string' ? data.claim : unnamedClaim(typeof data.node === 'string' ? data.node : undefined, String(data.at));
      return { ...data, claim, epoch: typeof data.epoch === 'string' ? data.epoch : claim };
    },
  ],
]);

/** The event types that have an older shape. */
export const UPCAST_TYPES: readonly string[] = [...UPCASTERS.keys()];

/** `data` of an event of this type in its current shape; unchanged (the same value) when it already is. */
export function upcast(type: string, data: unknown): unknown {
  const upcaster = UPCASTERS.get(type);
  if (!upcaster || typeof data !== 'object' || data === null || Array.isArray(data)) return data;
  return upcaster(data as EventData);
}
