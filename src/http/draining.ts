// Graceful shutdown's view of a server: how many requests are in flight, and responses whose head
// asks the client to close the connection once the node drains, so that no request follows one
// on a keep-alive connection while the node waits for the last answers.
//
// Requests are counted, not kept in a Set: V8 leaves a rehashed Set's old table pointing at the
// entries it held and at its successor, and once such a table sits in the old generation the
// young-generation collector keeps all it reaches alive until the next full collection. A Set of
// responses that every request enters and leaves would carry every request's objects into the
// old generation.
import { type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders, type Server, ServerResponse } from 'node:http';

export interface Draining {
  /** The response class to create the server with (createServer's `ServerResponse` option). */
  ServerResponse: typeof ServerResponse<IncomingMessage>;
  /** Counts the server's requests until their responses close. */
  track(server: Server): void;
  /** From now on every response whose head is still to be written closes its connection. */
  begin(): void;
  /** Resolves once no request is in flight, or after `timeoutMs`. */
  settled(timeoutMs: number): Promise<void>;
}

export function draining(): Draining {
  let closing = false;
  let inFlight = 0;
  let onDrained: (() => void) | undefined;

  class DrainingResponse extends ServerResponse<IncomingMessage> {
    override writeHead(statusCode: number, reasonOrHeaders?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
      if (closing && !this.headersSent) this.setHeader('Connection', 'close');
      // Node takes an object or array in second place as the headers.
      return super.writeHead(statusCode, reasonOrHeaders as string, headers);
    }
  }

  // One listener shared by every response (a realtime stream keeps its response for hours).
  function responseClosed(): void {
    inFlight -= 1;
    if (inFlight === 0) onDrained?.();
  }

  return {
    ServerResponse: DrainingResponse,
    track(server) {
      server.on('request', (_req, res: ServerResponse) => {
        inFlight += 1;
        res.on('close', responseClosed);
      });
    },
    begin() {
      closing = true;
    },
    async settled(timeoutMs) {
      if (inFlight === 0) return;
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        onDrained = resolve;
        timer = setTimeout(resolve, timeoutMs);
      });
      clearTimeout(timer);
    },
  };
}
