// The SQLite adapter's read-ahead thread (started by sqliteReader.ts): its own read-only
// connection reads the page asked for and sends it back one array per column.
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import type { ReaderOptions, ReaderReply, ReaderRequest } from './sqliteReader.js';

const options = workerData as ReaderOptions;
const port = parentPort!;
const db = new Database(options.file, { readonly: true });
const page = db.prepare<[number, number], unknown[]>(options.sql).raw(true);

port.on('message', ({ id, after, limit }: ReaderRequest) => {
  let reply: ReaderReply;
  try {
    const rows = page.all(after, limit);
    const columns = rows.length === 0 ? [] : rows[0]!.map((_, c) => rows.map((row) => row[c]));
    reply = { id, columns, length: rows.length };
  } catch {
    reply = { id }; // the caller reads the page itself
  }
  port.postMessage(reply);
});
