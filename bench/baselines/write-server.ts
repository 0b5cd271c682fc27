// Baseline for admin-write: a bare node:http server that parses the same JSON body and does one
// better-sqlite3 insert per request (its own transaction). DB_FILE names the file; SYNC is the
// SQLite `synchronous` level: FULL (the service's durability: fsync before answering) or NORMAL
// (WAL without an fsync per commit). Prints `READY {"url"}`.
import Database from 'better-sqlite3';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const db = new Database(process.env.DB_FILE!);
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${process.env.SYNC === 'NORMAL' ? 'NORMAL' : 'FULL'}`);
db.exec('CREATE TABLE IF NOT EXISTS vip (id INTEGER PRIMARY KEY, oId TEXT NOT NULL, quality TEXT NOT NULL, expired TEXT NOT NULL, created TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO vip (oId, quality, expired, created) VALUES (?, ?, ?, ?)');

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let body: { oId?: unknown; quality?: unknown; expired?: unknown };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (req.method !== 'POST' || typeof body.oId !== 'string' || typeof body.quality !== 'string' || typeof body.expired !== 'string') {
      res.writeHead(400).end();
      return;
    }
    const created = new Date().toISOString();
    const { lastInsertRowid } = insert.run(body.oId, body.quality, body.expired, created);
    const answer = JSON.stringify({
      code: 0,
      msg: 'success',
      data: { id: String(lastInsertRowid), userId: body.oId, quality: body.quality, expired: `${body.expired}.000Z`, created, updated: created },
    });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(answer) }).end(answer);
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY ${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  db.close();
  process.exit(0);
});
