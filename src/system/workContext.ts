// The context of a piece of work — the node, and for a request its id and the app and key or
// the operator behind it — which the one write path (src/services/commandHandler.ts) stamps on
// every event the work appends. Passed along by hand rather than kept in AsyncLocalStorage:
// AsyncLocalStorage makes every promise of the process pay a hook, the hottest paths included.
// A request's context lives in its koa state; a node's own work (sweeps, retention, heartbeats)
// carries the node only.
//
// A request's context also remembers where the request last appended to each stream: its next
// event there names that one as its cause (a platform outcome names its intent).
import { clipText, METADATA_FIELDS, type EventMetadata } from './eventMetadata.js';

/** Streams a request remembers for causation; its appends to streams beyond these name no cause. */
const STREAMS_REMEMBERED = 32;

export class WorkContext {
  /** Work done for no one in particular (a test's harness, a tool): its events carry no metadata. */
  static readonly unattributed = new WorkContext(undefined, false);

  /** A request's appends: stream → global position of its last event there (made at its first append). */
  private appended: Map<string, number> | undefined;

  private constructor(
    /**
     * Stamped on every event appended in this context: replaced whole (never changed in place) when
     * a request learns who made it, so events appended before keep what they were stamped with.
     */
    private metadata: Readonly<EventMetadata> | undefined,
    /** A request's context: it remembers its appends, and learns who made it in place. */
    private readonly request: boolean,
  ) {}

  /** The node's own work: its events name the node only. */
  static ofNode(nodeId: string): WorkContext {
    return new WorkContext({ nodeId: clipText(nodeId) }, false);
  }

  /** The request `requestId` (a valid X-Request-Id), on the node it runs on, if any. */
  static ofRequest(requestId: string, nodeId: string | undefined): WorkContext {
    const metadata: EventMetadata = { requestId: clipText(requestId) };
    if (nodeId !== undefined) metadata.nodeId = clipText(nodeId);
    return new WorkContext(metadata, true);
  }

  /** This work, made with this app's key (a request's context keeps it from then on). */
  asApp(appId: string, keyId: string): WorkContext {
    return this.with({ appId: clipText(appId), keyId: clipText(keyId) });
  }

  /** This work, made by this operator (a request's context keeps it from then on). */
  asOperator(operator: string): WorkContext {
    return this.with({ operator: clipText(operator) });
  }

  private with(fields: EventMetadata): WorkContext {
    // A request's context is that request's alone, and who made it is learnt once, before anything
    // of it is appended: the context takes it in place, sparing every request a second context.
    if (this.request) {
      this.metadata = merged(this.metadata, fields);
      return this;
    }
    return new WorkContext(merged(this.metadata, fields), false);
  }

  /**
   * What events appended now to `streamName` carry: the context's fields, and as cause the
   * request's last event on that stream. Undefined for unattributed work (the events carry none).
   */
  metadataFor(streamName: string): Readonly<EventMetadata> | undefined {
    const cause = this.appended?.get(streamName);
    return cause === undefined || this.metadata === undefined ? this.metadata : merged(this.metadata, { causationId: cause });
  }

  /**
   * This request appended to `streamName`, its last event there at `position` (undefined: at a
   * position not known, so nothing there is taken as the cause of what follows).
   */
  noteAppended(streamName: string, position: number | undefined): void {
    if (!this.request) return;
    if (position === undefined) {
      this.appended?.delete(streamName);
      return;
    }
    this.appended ??= new Map();
    if (this.appended.size < STREAMS_REMEMBERED || this.appended.has(streamName)) this.appended.set(streamName, position);
  }
}

/**
 * `metadata` with `fields` over it, built field by field in one order: contexts' metadata comes in
 * many shapes, and a spread of objects of many shapes takes V8's slow, generic path.
 */
function merged(metadata: Readonly<EventMetadata> | undefined, fields: EventMetadata): EventMetadata {
  const next: Record<string, string | number> = {};
  for (const name of METADATA_FIELDS) {
    const value = fields[name] ?? metadata?.[name];
    if (value !== undefined) next[name] = value;
  }
  return next as EventMetadata;
}
