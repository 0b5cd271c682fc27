// A service logger whose lines a test reads back, parsed.
import { pino } from 'pino';
import type { Logger } from '../../src/log.js';

export function capturedLog(level: 'warn' | 'info'): { log: Logger; lines(): Array<Record<string, unknown>> } {
  let logged = '';
  const log = pino(
    { level },
    {
      write: (line: string) => {
        logged += line;
      },
    },
  );
  return {
    log,
    lines: () =>
      logged
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
