import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON logs on stdout. Secrets never reach a log line: these paths are redacted wherever they appear. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'community-bridge' },
    redact: { paths: ['apiKey', 'key', 'headers.apikey', 'headers.cookie', 'goldFingerKey', 'sessionSecret'], censor: '[redacted]' },
  });
}
