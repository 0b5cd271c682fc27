// Streams that nothing needs once they have ended: clients that closed without anyone signing in,
// sign-in attempts that completed, failed or expired (the retention service deletes them some
// time after they end, so that connecting and leaving does not grow the log), and Idempotency-Key
// streams (deleted once the key has expired: the key is free then, and its stream says nothing
// an audit needs; the operations and writes it fenced keep their own records). Other read models have forgotten them by then already (the clients
// model drops a client when it disconnects; no model keeps sign-in attempts), so a rebuild from
// the shortened log gives the same answers.
import { streams } from '../domain/events.js';
import type { RecordedEvent } from '../store/port.js';
import { asDomain } from './recorded.js';
import type { Projection } from './runner.js';
import { refill } from './snapshotState.js';

export class DisposableStreamsReadModel implements Projection {
  readonly name = 'disposableStreams';
  readonly version = 2;
  readonly handles = [
    'ClientConnected',
    'ClientSignedIn',
    'ClientDisconnected',
    'LoginStarted',
    'LoginClaimed',
    'LoginCompleted',
    'LoginFailed',
    'IdempotentRequestStarted',
    'IdempotentRequestCompleted',
    'StreamsDeleted',
  ] as const;
  /** Connected clients nobody signed in to (yet). */
  private readonly anonymousClients = new Set<string>();
  /** Open sign-in attempts and when they expire. */
  private readonly openLogins = new Map<string, string>();
  /** Ended streams and when they ended (ISO instant). */
  private readonly ended = new Map<string, string>();
  /** Idempotency-Key streams and when the key is free (ISO instant). */
  private readonly keys = new Map<string, string>();

  apply(recorded: RecordedEvent): void {
    const event = asDomain(recorded);
    switch (event.type) {
      case 'ClientConnected':
        if (!event.data.session) this.anonymousClients.add(recorded.streamName);
        break;
      case 'ClientSignedIn':
        this.anonymousClients.delete(recorded.streamName);
        break;
      case 'ClientDisconnected':
        if (this.anonymousClients.delete(recorded.streamName)) this.ended.set(recorded.streamName, event.data.at);
        break;
      // An attempt's state is good until it expires: its stream (the proof it was used) stays as long.
      case 'LoginStarted':
        this.openLogins.set(streams.login(event.data.stateHash), event.data.expires);
        break;
      case 'LoginClaimed':
        if (event.data.expires !== undefined) this.openLogins.set(streams.login(event.data.stateHash), event.data.expires);
        break;
      // Ended, but kept until its state has expired too: a replay of it must still find it used.
      case 'LoginCompleted':
      case 'LoginFailed': {
        const stream = streams.login(event.data.stateHash);
        const expires = this.openLogins.get(stream);
        this.openLogins.delete(stream);
        this.ended.set(stream, expires !== undefined && expires > event.data.at ? expires : event.data.at);
        break;
      }
      // A key's stream is kept until the key expires, released or not: a claim of the same
      // request after a release goes on with its use (src/domain/idempotency.ts).
      case 'IdempotentRequestStarted':
      case 'IdempotentRequestCompleted':
        this.keys.set(recorded.streamName, event.data.expires);
        break;
      // Forgotten whatever state they were in: a client still counted as connected had its end
      // deleted with it (a start from a snapshot taken before that end). A stream the deletion
      // kept is the deleting node's to delete again (src/services/retention.ts).
      case 'StreamsDeleted':
        this.forget(event.data.streams);
        break;
    }
  }

  snapshotState() {
    return { anonymousClients: this.anonymousClients, openLogins: this.openLogins, ended: this.ended, keys: this.keys };
  }

  restoreState(state: ReturnType<DisposableStreamsReadModel['snapshotState']>): boolean {
    refill(this.anonymousClients, state.anonymousClients);
    refill(this.openLogins, state.openLogins);
    refill(this.ended, state.ended);
    refill(this.keys, state.keys);
    return true;
  }

  /**
   * Streams due for deletion at `now`: anonymous ones that ended (or, for sign-ins, expired)
   * `retentionMs` or more before it, and Idempotency-Key streams whose key is free.
   */
  dueBy(now: string, retentionMs: number): string[] {
    const cutoff = new Date(Date.parse(now) - retentionMs).toISOString();
    for (const [stream, expires] of this.openLogins) {
      if (expires <= cutoff) {
        this.openLogins.delete(stream);
        this.ended.set(stream, expires);
      }
    }
    const due = [...this.ended].filter(([, at]) => at <= cutoff).map(([stream]) => stream);
    for (const [stream, free] of this.keys) if (free <= now) due.push(stream);
    return due;
  }

  /** The streams were deleted. */
  forget(streamNames: readonly string[]): void {
    for (const stream of streamNames) {
      this.anonymousClients.delete(stream);
      this.openLogins.delete(stream);
      this.ended.delete(stream);
      this.keys.delete(stream);
    }
  }

  get size(): number {
    return this.anonymousClients.size + this.openLogins.size + this.ended.size + this.keys.size;
  }
}
