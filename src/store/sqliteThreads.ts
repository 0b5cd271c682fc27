// Starts the SQLite adapter's worker threads (the writer, the read-ahead reader) from their own
// modules, loaded by path. Built (dist/), a thread is the compiled .js next to this file. From the
// TypeScript sources (tsx) it is the .ts module, started with sqliteThreadHooks.mjs preloaded:
// under Node 20 a worker does not get the tsx hooks of the thread that starts it.
import { receiveMessageOnPort, Worker, type MessagePort, type Transferable } from 'node:worker_threads';

/** This module runs from the TypeScript sources (tsx), not from dist/. */
const FROM_SOURCES = import.meta.url.endsWith('.ts');

export type ThreadModule = 'sqliteWriterThread' | 'sqliteReaderThread';

export function startThread(module: ThreadModule, workerData: unknown, transferList: readonly Transferable[] = []): Worker {
  const entry = new URL(`./${module}${FROM_SOURCES ? '.ts' : '.js'}`, import.meta.url);
  // Nothing inherited from the process's own flags: a thread needs only the TypeScript hooks.
  const execArgv = FROM_SOURCES ? ['--import', new URL('./sqliteThreadHooks.mjs', import.meta.url).href] : [];
  return new Worker(entry, { workerData, execArgv, transferList: [...transferList] });
}

/** The messages already waiting on a port, taken now rather than when the event loop turns to them. */
export function* queuedMessages<Message>(port: MessagePort): Generator<Message> {
  for (let received = receiveMessageOnPort(port); received; received = receiveMessageOnPort(port)) yield received.message as Message;
}
