// The PostgreSQL adapter's wake-up for subscribers: one connection per store that LISTENs on the
// channel of its schema, which every node NOTIFYs after its appends commit. A notification only
// says "look": subscribers read the table itself, so a notification lost or merged with another
// costs a poll interval at most, never an event. The connection is not pooled: a pooled one would
// stop listening when handed to a query. A network that silently drops the connection would not be
// noticed by listening alone: it is asked a trivial query every CHECK_EVERY_MS, and one left
// unanswered (the query timeout) counts as lost.
//
// The same connection sends this node's notifications: coalesced (one in flight, NOTIFY_EVERY_MS
// apart at least), each in a transaction of its own that commits without waiting for a WAL flush
// (a notification needs no durability), carrying this listener's token so that the node does not
// wake itself: its own commits wake its subscribers directly.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { ClientConfig } from 'pg';

const CHECK_EVERY_MS = 5000;
/**
 * Notifications sent at most this often: other nodes' followers learn of commits this much later
 * at most. Each one makes every other node read, so under load its rate is their reads' rate.
 */
const NOTIFY_EVERY_MS = 20;

export interface ListenerEvents {
  /** An append committed (here or on another node). */
  appended(): void;
  /** The listening connection failed or ended: nothing is heard until the next ready(). */
  lost(error: Error): void;
}

export class AppendListener {
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  private checkTimer: NodeJS.Timeout | undefined;
  private readonly token = randomUUID();
  /** A notification is on its way or waiting for its interval; `notifyAgain`: commits since it was sent. */
  private notifying = false;
  private notifyAgain = false;
  private lastNotifyAt = 0;

  constructor(
    private readonly config: ClientConfig,
    private readonly channel: string,
    private readonly events: ListenerEvents,
  ) {}

  /** Resolves once LISTEN is in force, connecting first when there is no listening connection. */
  ready(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('The event store is closed'));
    if (this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  /**
   * Tells the other nodes that appends committed, after the commit (a NOTIFY inside an append's
   * transaction would serialise commits). A notification that fails is not sent again: a lost
   * notification costs the other nodes a poll interval, never an event.
   */
  notify(): void {
    if (this.closed) return;
    if (this.notifying) {
      this.notifyAgain = true;
      return;
    }
    this.notifying = true;
    this.notifyAgain = false;
    void this.send()
      .catch(() => undefined) // a lost connection is told by the check query or the next ready()
      .finally(() => {
        this.notifying = false;
        if (this.notifyAgain) this.notify();
      });
  }

  private async send(): Promise<void> {
    await this.ready();
    const wait = this.lastNotifyAt + NOTIFY_EVERY_MS - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const client = this.client;
    if (!client) return;
    this.lastNotifyAt = performance.now();
    await client.query('SELECT pg_notify($1, $2)', [this.channel, this.token]);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.checkTimer);
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.config);
    client.on('error', (error) => this.lose(client, error));
    client.on('end', () => this.lose(client, new Error('the connection listening for appends was closed')));
    client.on('notification', (message) => message.payload !== this.token && this.events.appended());
    try {
      await client.connect();
      await client.query('SET synchronous_commit = off');
      await client.query(`LISTEN ${client.escapeIdentifier(this.channel)}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      throw new Error('The event store is closed');
    }
    this.client = client;
    clearInterval(this.checkTimer);
    this.checkTimer = setInterval(() => {
      client.query('SELECT 1').catch((error: Error) => this.lose(client, error));
    }, CHECK_EVERY_MS);
    this.checkTimer.unref();
  }

  private lose(client: pg.Client, error: Error): void {
    if (this.client !== client) return; // a connection still connecting fails through connect()
    this.client = undefined;
    clearInterval(this.checkTimer);
    void client.end().catch(() => undefined);
    this.events.lost(error);
  }
}
