// One platform call within its deadline, over real HTTP: what it answers, and that a call given up
// before it was written is never written afterwards.
import { createServer, type IncomingMessage, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildConnector, Client } from 'undici';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { callWithin, DeadlineExpired } from '../../src/community/platformCall.js';
import { rejects } from '../support/rejects.js';

/** A server that records the path of every request it gets; closed after `run`. */
async function withServer(handler: RequestListener, run: (url: string, arrived: string[]) => Promise<void>): Promise<void> {
  const arrived: string[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    arrived.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, arrived);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

test('a 2xx answer resolves with its status and body; any other with its status and no body, its connection kept for the next call', () =>
  withServer(
    (req, res) => {
      if (req.url === '/missing') res.writeHead(404, { 'Content-Type': 'text/html' }).end('<html>not here</html>');
      else res.writeHead(200, { 'Content-Type': 'application/json' }).end('\uFEFF{"code":0}');
    },
    async (url, arrived) => {
      const client = new Client(url);
      try {
        assert.equal(await callWithin(client, { method: 'GET', path: '/missing' }, 2000), { statusCode: 404, text: '' });
        assert.equal(await callWithin(client, { method: 'GET', path: '/found' }, 2000), { statusCode: 200, text: '{"code":0}' }, 'a byte order mark is dropped');
        assert.equal(arrived, ['/missing', '/found']);
      } finally {
        await client.destroy();
      }
    },
  ));

test('a call whose deadline passes while its connection is being made fails at the deadline and is never written afterwards', () =>
  withServer(
    (_req, res) => res.writeHead(200).end('{}'),
    async (url, arrived) => {
      // One connection, made slowly: calls go out on it in the order they were made.
      const connect = buildConnector({});
      const client = new Client(url, { connect: (options, callback) => void setTimeout(() => connect(options, callback), 300) });
      try {
        const first = callWithin(client, { method: 'POST', path: '/write', body: '{}' }, 50);
        const second = callWithin(client, { method: 'GET', path: '/after' }, 5000);
        await rejects(first, DeadlineExpired, 'the call whose deadline came before its connection');
        assert.equal(arrived, [], 'nothing was written before the connection was made');
        assert.equal((await second).statusCode, 200, 'the next call goes out once the connection is made');
        assert.equal(arrived, ['/after'], 'the call given up at its deadline was never written');
      } finally {
        await client.destroy();
      }
    },
  ));

test('an answer that never comes fails at the deadline', () =>
  withServer(
    () => undefined,
    async (url, arrived) => {
      const client = new Client(url);
      try {
        await rejects(callWithin(client, { method: 'GET', path: '/hang' }, 200), DeadlineExpired);
        assert.equal(arrived, ['/hang'], 'the call was written: its outcome is the platform’s to know');
      } finally {
        await client.destroy();
      }
    },
  ));

test.run();
