// The SQLite adapter's writer thread: what crosses between it and the event loop, and how it is
// started. A commit with synchronous=FULL waits for fsync; on the event loop that wait stops every
// request, stream and timer of the process for its duration. In the worker thread
// (sqliteWriterThread.ts) the wait blocks only the worker: the event loop keeps serving, and the
// appends that arrive meanwhile go in the next commit (group commit).
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import type { ExpectedRevision, NodeBeat } from './port.js';
import { startThread } from './sqliteThreads.js';

export interface WriterOptions {
  /** The database file (its schema exists already: SqliteEventStore creates it). */
  file: string;
  /** Test only: caps the file at this many pages (PRAGMA max_page_count), as a full disk would. */
  maxPageCount?: number;
}

/** An event as the writer receives it: data and metadata already serialised. */
export interface WriterEvent {
  type: string;
  data: string;
  metadata: string | null;
}

export interface WriterStreamWrite {
  stream: string;
  expected: ExpectedRevision;
  events: WriterEvent[];
}

/** One append: its stream, and the stream checked (and written) with it in the same transaction. */
export interface WriterAppend extends WriterStreamWrite {
  alongside?: WriterStreamWrite;
}

/** Appends stamped with one `created`; the thread may commit several batches in one transaction. */
export interface WriterBatch {
  kind: 'batch';
  id: number;
  created: string;
  appends: WriterAppend[];
}

/** This process's heartbeat, and the instances whose rows go. */
export interface WriterBeat {
  kind: 'beat';
  id: number;
  mine: NodeBeat;
  forget: string[];
}

export type WriterRequest = WriterBatch | WriterBeat;

export interface WrittenStream {
  /** The stream's last revision after the append (-1: it still does not exist). */
  revision: number;
  positions: number[];
}

export type WriterOutcome =
  | ({ ok: true; alongside?: WrittenStream } & WrittenStream)
  /** `current`: the stream's last revision, -1 when it does not exist. */
  | { ok: false; conflict: { alongside: boolean; current: number } }
  | { ok: false; message: string };

/** A failure of the whole request: nothing of it was written. */
export interface WriterFailure {
  message: string;
  code: string | undefined;
}

/**
 * The batches of one transaction (`ids` in the order they were sent, `outcomes` per batch), or a
 * beat's answer.
 */
export type WriterReply =
  | { ids: number[]; outcomes: WriterOutcome[][] }
  | { ids: number[]; fatal: WriterFailure }
  | { id: number; beats: NodeBeat[] }
  | { id: number; fatal: WriterFailure };

/** What the writer thread is started with: its options, and the port it answers on. */
export interface WriterThreadData extends WriterOptions {
  replies: MessagePort;
}

/**
 * Starts a writer thread on the file. It answers on a channel of its own rather than the
 * worker's: a port can also be read synchronously (`receiveMessageOnPort`), so the event loop
 * takes a reply that arrived during a busy turn at that turn's end, not a turn later.
 */
export function startWriter(options: WriterOptions): { worker: Worker; replies: MessagePort } {
  const { port1, port2 } = new MessageChannel();
  const data: WriterThreadData = { ...options, replies: port2 };
  return { worker: startThread('sqliteWriterThread', data, [port2]), replies: port1 };
}
