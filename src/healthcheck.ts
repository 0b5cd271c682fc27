// The container image's HEALTHCHECK: exits 0 when this node's /readyz answers 200, 1 otherwise,
// saying why on stdout (`docker inspect` shows it). Node itself, so the image needs no curl.
import { loadConfig } from './config.js';

/** Below the HEALTHCHECK's own timeout, so the reason is printed before Docker gives up. */
const ANSWER_TIMEOUT_MS = 4000;

const { host, port } = loadConfig();
// A wildcard address is where the service listens, not where to reach it.
const target = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
try {
  const res = await fetch(`http://${target}:${port}/readyz`, { signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS) });
  process.stdout.write(`${res.status} ${await res.text()}\n`);
  process.exit(res.status === 200 ? 0 : 1);
} catch (error) {
  process.stdout.write(`/readyz did not answer: ${(error as Error).message}\n`);
  process.exit(1);
}
