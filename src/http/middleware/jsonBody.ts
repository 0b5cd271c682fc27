// Reads and parses an endpoint's JSON body, bounded. The body every API client sends — Content-Type
// application/json (UTF-8), a Content-Length, no Content-Encoding — is read here in one pass: the
// length is checked before a byte is read, the bytes are decoded and parsed once, with koa-body's
// own rules (an object or array at the top, a `__proto__` key refused). Any other request (a
// compressed or chunked body, another JSON media type) goes through koa-body as before: the
// general reader costs several type checks, an inflation stream and a decoder per request.
import type { IncomingMessage } from 'node:http';
import * as bourne from '@hapi/bourne';
import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { invalid } from '../validation.js';

/** The content type every client of the API sends, which the general reader would read as UTF-8 JSON too. */
const PLAIN_JSON = /^application\/json[ \t]*(?:;[ \t]*charset="?utf-8"?[ \t]*)?$/i;
/** The methods koa-body reads a body for. */
const READ_FOR = new Set(['POST', 'PUT', 'PATCH']);
/** koa-body's strict JSON: an object or an array, after RFC 8259 whitespace. */
const OBJECT_OR_ARRAY = /^[ \t\n\r]*[[{]/;

/** An error as koa-body raises it, so that the error middleware answers both readers alike. */
const framework = (status: number, type: string, message: string) => Object.assign(new Error(message), { status, type, expose: status < 500 });

/** The body's bytes as text: exactly `length` of them, or the request failed. */
function readText(req: IncomingMessage, length: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    };
    const done = (error?: Error) => {
      req.off('data', onData).off('end', onEnd).off('error', done).off('close', onClose);
      if (error) return reject(error);
      if (received !== length) return reject(framework(400, 'request.size.invalid', 'request size did not match content length'));
      const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received)).toString('utf8');
      // The general reader's decoder drops a byte order mark.
      resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    };
    const onEnd = () => done();
    const onClose = () => done(framework(400, 'request.aborted', 'request aborted'));
    req.on('data', onData).once('end', onEnd).once('error', done).once('close', onClose);
  });
}

async function readPlainJson(ctx: Parameters<Middleware>[0], length: number): Promise<void> {
  const text = await readText(ctx.req, length);
  if (text === '') {
    ctx.request.body = {};
    return;
  }
  if (!OBJECT_OR_ARRAY.test(text)) throw invalid('body', 'malformed JSON');
  try {
    ctx.request.body = bourne.parse(text, { protoAction: 'error' });
  } catch {
    throw invalid('body', 'malformed JSON');
  }
}

/** Reads the body of a request to an endpoint that takes JSON: at most `maxBytes`, else 413. */
export function jsonBody(maxBytes: number): Middleware {
  const general = koaBody({ json: true, jsonStrict: true, jsonLimit: maxBytes, urlencoded: false, text: false, multipart: false, patchNode: false });
  return async (ctx, next) => {
    const { headers } = ctx.req;
    const length = headers['content-length'];
    const type = headers['content-type'];
    if (
      length !== undefined &&
      type !== undefined &&
      headers['content-encoding'] === undefined &&
      headers['transfer-encoding'] === undefined &&
      READ_FOR.has(ctx.method) &&
      PLAIN_JSON.test(type)
    ) {
      const bytes = Number(length);
      if (bytes > maxBytes) throw framework(413, 'entity.too.large', 'request entity too large');
      await readPlainJson(ctx, bytes);
      return next();
    }
    // Anything else is refused unless it is JSON, rather than parsed as empty.
    if (ctx.request.length && !ctx.is('application/json')) throw invalid('body', 'Content-Type must be application/json');
    return general(ctx, next);
  };
}
