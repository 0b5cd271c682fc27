// One request to a service under test, the way every test helper sends it: redirects not
// followed, the body parsed when it is JSON, the text kept for what is not.
import { type IncomingHttpHeaders, request } from 'node:http';

/**
 * An answer's body where a suite does not name its shape: whatever JSON the service sent, wrong
 * shapes included, read field by field by the assertions. Suites that rely on a shape pass it.
 */
// biome-ignore lint/suspicious/noExplicitAny: an answer is checked, not trusted, so its shape is unknown until asserted
export type AnswerBody = any;

export interface Answer<T = AnswerBody> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface RequestOptions {
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as it is (a malformed body), as JSON unless a content-type header says otherwise. */
  raw?: string;
  apiKey?: string;
  headers?: Record<string, string>;
}

/** One request to the service at `baseUrl`, redirects not followed; the body parsed when it is JSON. */
export async function requestAt<T = AnswerBody>(baseUrl: string, method: string, path: string, init: RequestOptions = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.apiKey !== undefined) headers.apiKey = init.apiKey;
  const body = init.body !== undefined ? JSON.stringify(init.body) : init.raw;
  if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  const res = await fetch(baseUrl + path, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed as T, text, headers: res.headers };
}

export interface OpenedAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The first chunk of a stream (200), or the whole body of any other answer. */
  text: string;
  /** Ends the request (and the stream). */
  close(): void;
}

/** A GET on a socket of its own, answered at the first chunk of a 200 (kept open) or with the whole of any other answer. */
export function openOwnSocket(url: string, headers: Record<string, string> = {}): Promise<OpenedAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      const answer = () => ({ status: res.statusCode!, headers: res.headers, text, close: () => req.destroy() });
      res.on('data', (chunk: string) => {
        text += chunk;
        if (res.statusCode === 200) resolve(answer());
      });
      res.on('end', () => resolve(answer()));
    });
    req.on('error', reject);
    req.end();
  });
}
