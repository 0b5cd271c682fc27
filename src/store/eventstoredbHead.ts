// The position of the newest domain event in $all (headPosition) on EventStoreDB. The events at
// the end of $all are mostly ones the log hides: every node's heartbeat, each second, and the
// server's own. So what the adapter's reads and its subscription have gone through is kept as a
// fact, "nothing newer than `head` up to `scannedTo` is a domain event", and headPosition reads
// $all backwards from its end only as far as `scannedTo`: usually a single event.
import { BACKWARDS, END, type AllStreamRecordedEvent, type EventStoreDBClient, type ReadPosition } from '@eventstore/db-client';
import { OutOfOrderEventError } from './port.js';
import { untilEnded } from './eventstoredbReads.js';

/**
 * Events per backward read: the first asks for one (the newest event is usually known already),
 * each next one twice as many as the last, up to this.
 */
export const HEAD_PAGE_MAX = 256;

export class HeadKnowledge {
  /** The newest domain event's position (0: none) among the events up to `scannedTo`. */
  private head = 0;
  /** Every event of $all up to this position has been looked at. */
  private scannedTo = 0;

  /**
   * Every event after `after` up to `to` was looked at, and `newestDomain` is the newest domain
   * event among them (undefined: none). Extends what is known when it joins on to it.
   */
  covered(after: number, to: number, newestDomain: number | undefined): void {
    if (after > this.scannedTo || to <= this.scannedTo) return;
    this.scannedTo = to;
    if (newestDomain !== undefined && newestDomain > this.head) this.head = newestDomain;
  }

  /** The domain event at `head` and nothing after it up to `to` but hidden events. */
  newest(head: number, to: number): void {
    if (to < this.scannedTo) return;
    this.head = head;
    this.scannedTo = to;
  }

  read(): { head: number; scannedTo: number } {
    return { head: this.head, scannedTo: this.scannedTo };
  }
}

/**
 * Reads $all backwards from its end, in pages that grow, until a domain event, an event already
 * looked at, or the start of $all. Every page's call ends (read to its end or cancelled).
 */
export async function readHead(client: Pick<EventStoreDBClient, 'readAll'>, knowledge: HeadKnowledge, isHidden: (event: AllStreamRecordedEvent) => boolean): Promise<number> {
  const known = knowledge.read();
  let from: ReadPosition = END;
  /** The position of the last event read: the next page starts there. */
  let last: number | undefined;
  /** The newest event of $all, the first one read. */
  let newest: number | undefined;
  for (let pageSize = 1; ; pageSize = Math.min(pageSize * 2, HEAD_PAGE_MAX)) {
    let read = 0;
    for await (const { event } of untilEnded(client.readAll({ direction: BACKWARDS, fromPosition: from, maxCount: pageSize }))) {
      read += 1;
      if (!event) continue;
      const position = Number(event.position.commit);
      if (last !== undefined) {
        // A page that starts with the event at its start position: the last one of the page before.
        if (position === last && read === 1) continue;
        if (position > last) throw new OutOfOrderEventError(position, last);
      }
      newest ??= position;
      if (position <= known.scannedTo) {
        knowledge.newest(known.head, newest);
        return known.head;
      }
      if (!isHidden(event)) {
        knowledge.newest(position, newest);
        return position;
      }
      last = position;
      from = event.position;
    }
    // The start of $all: no domain event after the known head (0 when nothing is known).
    if (read < pageSize) {
      if (newest !== undefined) knowledge.newest(known.head, newest);
      return known.head;
    }
  }
}
