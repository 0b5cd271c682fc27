// The PostgreSQL adapter's wake-up for subscribers: one connection per store that LISTENs on the
// channel every append NOTIFYs (at its commit). A notification only says "look": subscribers
// read the table itself, so a notification lost or merged with another costs a poll interval at
// most, never an event. The connection is not pooled: a pooled one would stop listening when
// handed to a query.
import pg from 'pg';
import type { ClientConfig } from 'pg';

/** The channel appends notify, with their last position as the payload. */
export const APPENDED_CHANNEL = 'community_bridge_appended';

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

  constructor(
    private readonly config: ClientConfig,
    private readonly events: ListenerEvents,
  ) {}

  /** Resolves once LISTEN is in force, connecting first when there is no listening connection. */
  ready(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('The event store is closed'));
    if (this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.config);
    client.on('error', (error) => this.lose(client, error));
    client.on('end', () => this.lose(client, new Error('the connection listening for appends was closed')));
    client.on('notification', () => this.events.appended());
    try {
      await client.connect();
      await client.query(`LISTEN ${APPENDED_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      throw new Error('The event store is closed');
    }
    this.client = client;
  }

  private lose(client: pg.Client, error: Error): void {
    if (this.client !== client) return; // a connection still connecting fails through connect()
    this.client = undefined;
    void client.end().catch(() => undefined);
    this.events.lost(error);
  }
}
