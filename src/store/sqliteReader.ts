// The SQLite adapter's read-ahead for scans of the log in position order (a node's catch-up at
// start, `projections rebuild`): while the caller folds one page on the event loop, a reader
// thread with its own read-only connection reads the next one, and its rows arrive as a message.
// Reading rows is a large part of a catch-up; on a second core it overlaps the folding. A page
// crosses between the threads as one array per column (a handful of arrays to copy rather than
// one per row) and is put back into rows here.
//
// A page read ahead is what a read at that moment would have returned: the log only grows at its
// end, so a full page never changes, and a short last page only means the caller goes on from
// its end (live, through the subscription). The thread itself is sqliteReaderThread.ts.
import type { Worker } from 'node:worker_threads';
import { startThread } from './sqliteThreads.js';

export interface ReaderOptions {
  file: string;
  /** Takes (after, limit) and returns rows in position order, the position first. */
  sql: string;
}

export interface ReaderRequest {
  id: number;
  after: number;
  limit: number;
}

/** No columns: the reader could not read the page (the caller reads it itself). */
export interface ReaderReply {
  id: number;
  columns?: unknown[][];
  length?: number;
}

interface Ahead<Row extends [number, ...unknown[]]> {
  after: number;
  limit: number;
  rows: Promise<Row[] | undefined>;
}

function rowsOf<Row extends [number, ...unknown[]]>(columns: unknown[][], length: number): Row[] {
  const rows = new Array<Row>(length);
  for (let i = 0; i < length; i++) rows[i] = columns.map((column) => column[i]) as Row;
  return rows;
}

/** `Row`: a row as an array whose first column is the log position. */
export class ReadAhead<Row extends [number, ...unknown[]]> {
  private worker: Worker | undefined;
  private ahead: Ahead<Row> | undefined;
  private waiting: { id: number; resolve(rows: Row[] | undefined): void } | undefined;
  private lastId = 0;
  private closed = false;

  constructor(private readonly options: ReaderOptions) {}

  /**
   * The page after `after` if it was read ahead, undefined when it was not (or the reader could
   * not read it: the caller reads it itself then).
   */
  async take(after: number, limit: number): Promise<Row[] | undefined> {
    const ahead = this.ahead;
    this.ahead = undefined;
    if (!ahead || ahead.after !== after || ahead.limit !== limit) return undefined;
    return ahead.rows;
  }

  /** Starts reading the page after `after` on the reader thread, for the next take(). */
  readNext(after: number, limit: number): void {
    if (this.closed || this.waiting) return;
    const worker = this.start();
    const id = ++this.lastId;
    const rows = new Promise<Row[] | undefined>((resolve) => (this.waiting = { id, resolve }));
    this.ahead = { after, limit, rows };
    // Referenced only while a read is out, so an idle reader never keeps the process alive.
    worker.ref();
    const request: ReaderRequest = { id, after, limit };
    worker.postMessage(request);
  }

  /** Forgets a page read ahead (the log changed in a way a page could show: streams deleted). */
  discard(): void {
    this.ahead = undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.ahead = undefined;
    this.deliverRows(undefined);
    await this.worker?.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = startThread('sqliteReaderThread', this.options);
    worker.on('message', (reply: ReaderReply) => {
      if (reply.id === this.waiting?.id) this.deliverRows(reply.columns ? rowsOf(reply.columns, reply.length!) : undefined);
    });
    // A reader that fails reads nothing more: every page is read on the event loop again.
    const stop = () => {
      this.closed = true;
      this.deliverRows(undefined);
    };
    worker.on('error', stop);
    worker.on('exit', stop);
    this.worker = worker;
    return worker;
  }

  private deliverRows(rows: Row[] | undefined): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    this.worker?.unref();
    waiting?.resolve(rows);
  }
}
