// Event store on EventStoreDB (@eventstore/db-client 6.x), for deployments that run one.
//
// A thin translation of the port onto the client; the behaviour test/store/contract.ts asks
// for (exclusive positions, typed concurrency errors, [] for a missing stream) is added here.
//
// Positions: the port's numeric `position` is the event's commit position in $all. EventStoreDB
// writes every event of an append as its own committed record, so commit positions are distinct
// and increase event by event (only the long-gone explicit TCP transactions shared one). They
// are byte offsets in the transaction log, held here as a JS number: exact up to 2^53 bytes
// (8 PiB) of log, far beyond any store this service will meet. A numeric position p is turned
// back into {commit: p, prepare: p}, which is what an event's own position looks like.
//
// System events (type starting with `$`: stats, link events, stream metadata) are not part of
// the domain log and are hidden, as `excludeSystemEvents()` does for subscriptions.
import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  NO_STREAM,
  START,
  StreamDeletedError,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AppendExpectedRevision,
  type CurrentRevision,
  type JSONType,
  type Position,
  type ReadPosition,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import { ConcurrencyError } from '../domain/errors.js';
import type { AppendResult, EventStore, EventToAppend, ExpectedRevision, RecordedEvent, SubscribeOptions, Subscription } from './port.js';

function toPosition(position: number): ReadPosition {
  return position > 0 ? { commit: BigInt(position), prepare: BigInt(position) } : START;
}

function positionOf(streamName: string, position: Position | undefined): number {
  // Events read from a single stream carry their position only from EventStoreDB 22.6 on.
  if (!position) throw new Error(`EventStoreDB did not report the position of an event in ${streamName}: version 22.6 or later is required`);
  return Number(position.commit);
}

function toExpected(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  return BigInt(expected);
}

function fromCurrent(current: CurrentRevision): number | 'no_stream' {
  return current === NO_STREAM ? 'no_stream' : Number(current);
}

function isSystemEvent(event: EsdbRecordedEvent): boolean {
  return event.type.startsWith('$');
}

function toRecorded(event: EsdbRecordedEvent): RecordedEvent {
  return {
    streamName: event.streamId,
    revision: Number(event.revision),
    position: positionOf(event.streamId, event.position),
    type: event.type,
    data: event.data,
    // The client parses JSON metadata and gives undefined when there is none.
    metadata: event.metadata as Record<string, unknown> | undefined,
    created: event.created.toISOString(),
  };
}

export class EventStoreDbEventStore implements EventStore {
  private readonly client: EventStoreDBClient;
  private readonly subscriptions = new Set<Subscription>();

  /** @param connectionString e.g. `esdb://localhost:2113?tls=false` */
  constructor(connectionString: string) {
    this.client = EventStoreDBClient.connectionString(connectionString);
  }

  async append(streamName: string, events: EventToAppend[], options: { expectedRevision?: ExpectedRevision } = {}): Promise<AppendResult> {
    if (events.length === 0) throw new Error('Nothing to append');
    const expected = options.expectedRevision ?? 'any';
    // 'any' never conflicts, so a conflict always has a revision or 'no_stream' as expected.
    const conflict = (actual: number | 'no_stream') => new ConcurrencyError(streamName, expected as number | 'no_stream', actual);
    try {
      const result = await this.client.appendToStream(
        streamName,
        events.map((e) => jsonEvent({ type: e.type, data: e.data as JSONType, metadata: e.metadata })),
        { expectedRevision: toExpected(expected) },
      );
      // Only reached when the connection string sets throwOnAppendFailure=false.
      if (!result.success) throw conflict(result.nextExpectedRevision < 0n ? 'no_stream' : Number(result.nextExpectedRevision));
      return { nextExpectedRevision: Number(result.nextExpectedRevision), position: positionOf(streamName, result.position) };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) throw conflict(fromCurrent(error.actualVersion));
      throw error;
    }
  }

  async readStream(streamName: string): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(streamName)) {
        if (resolved.event) events.push(toRecorded(resolved.event));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return events;
  }

  async readAll(options: { after: number; limit: number }): Promise<RecordedEvent[]> {
    // readAll in client 6.x takes no server-side filter, so system events are dropped here and
    // the read goes on page by page until `limit` domain events are found or $all ends.
    const events: RecordedEvent[] = [];
    let seen = options.after;
    while (events.length < options.limit) {
      // A forward read includes the event at its start position: ask for one more.
      const pageSize = options.limit - events.length + 1;
      let read = 0;
      for await (const resolved of this.client.readAll({ fromPosition: toPosition(seen), maxCount: pageSize })) {
        read += 1;
        const event = resolved.event;
        if (!event || Number(event.position.commit) <= seen) continue;
        seen = Number(event.position.commit);
        if (!isSystemEvent(event)) events.push(toRecorded(event));
      }
      if (read < pageSize) break; // the end of $all
    }
    return events;
  }

  async headPosition(): Promise<number> {
    // The newest domain event: read $all backwards past any system events written after it.
    for await (const resolved of this.client.readAll({ direction: BACKWARDS, fromPosition: END })) {
      const event = resolved.event;
      if (event && !isSystemEvent(event)) return Number(event.position.commit);
    }
    return 0;
  }

  async deleteStreams(streamNames: readonly string[]): Promise<{ kept: string[] }> {
    // A soft delete: the streams read as not found at once, and the server's scavenge (an
    // operator's routine task) reclaims their space. Another node may have deleted one first.
    for (const streamName of streamNames) {
      try {
        await this.client.deleteStream(streamName);
      } catch (error) {
        if (!(error instanceof StreamNotFoundError || error instanceof StreamDeletedError)) throw error;
      }
    }
    return { kept: [] };
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    const subscription = this.client.subscribeToAll({ fromPosition: toPosition(options.after), filter: excludeSystemEvents() });
    let lastDelivered = options.after;
    let closed = false;
    subscription.on('data', (resolved) => {
      if (closed || !resolved.event) return;
      try {
        const recorded = toRecorded(resolved.event);
        // The port is exclusive of `after`; the server may start at it, so guard here.
        if (recorded.position <= lastDelivered) return;
        lastDelivered = recorded.position;
        options.onEvent(recorded);
      } catch (error) {
        options.onError?.(error as Error);
      }
    });
    subscription.on('error', (error) => {
      if (!closed) options.onError?.(error);
    });
    const handle: Subscription = {
      unsubscribe: async () => {
        if (closed) return;
        closed = true;
        this.subscriptions.delete(handle);
        await subscription.unsubscribe();
      },
    };
    this.subscriptions.add(handle);
    return handle;
  }

  async close(): Promise<void> {
    // Cancel the live subscriptions first so their streams end quietly rather than erroring.
    await Promise.all([...this.subscriptions].map((s) => s.unsubscribe()));
    await this.client.dispose();
  }
}
