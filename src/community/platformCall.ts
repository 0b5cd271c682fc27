// One HTTP call to the platform within a wall-clock deadline, through undici's dispatch API: the
// answer's status and, for a 2xx, its body as text. dispatch rather than request(): request()
// wraps every answer in a Node stream and an async resource, work that every admin request would
// pay for an answer of a few hundred bytes (docs/decisions.md).
import type { Dispatcher } from 'undici';

export interface PlatformAnswer {
  statusCode: number;
  /** The body of a 2xx answer; empty for any other (its body is read and dropped). */
  text: string;
}

/** The call's deadline passed (the platform may have received it). */
export class DeadlineExpired extends Error {
  constructor() {
    super('the platform call outlived its deadline');
  }
}

const BYTE_ORDER_MARK = 0xfeff;

const isSuccess = (statusCode: number) => statusCode >= 200 && statusCode < 300;

/**
 * Settles once: with the answer, with undici's error (its `code` says what failed), or with
 * DeadlineExpired after `timeoutMs`, body included. A call whose deadline passes before it is
 * written is never written afterwards.
 */
export function callWithin(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, timeoutMs: number): Promise<PlatformAnswer> {
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let settled = false;
    let statusCode = 0;
    const chunks: Buffer[] = [];
    /** True for the first outcome only: the deadline, the answer or the error, whichever comes first. */
    const first = () => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      return true;
    };
    const timer = setTimeout(() => {
      const expired = new DeadlineExpired();
      if (first()) reject(expired);
      controller?.abort(expired);
    }, timeoutMs);
    dispatcher.dispatch(options, {
      onRequestStart(started) {
        controller = started;
        if (settled) started.abort(new DeadlineExpired());
      },
      onResponseStart(_controller, status) {
        // 1xx answers (103 Early Hints, …) precede the final one.
        if (status >= 200) statusCode = status;
      },
      onResponseData(_controller, chunk) {
        if (isSuccess(statusCode)) chunks.push(chunk);
      },
      onResponseEnd() {
        if (!first()) return;
        const text = isSuccess(statusCode) ? Buffer.concat(chunks).toString('utf8') : '';
        resolve({ statusCode, text: text.charCodeAt(0) === BYTE_ORDER_MARK ? text.slice(1) : text });
      },
      onResponseError(_controller, error) {
        if (first()) reject(error);
      },
    });
  });
}
