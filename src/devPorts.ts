// The ports of `npm run dev` and `npm run simulator` beside the service's own: read from their
// variables like the rest of the configuration, and a port that cannot be opened told as the
// one variable to change, since a person trying the service often has another copy running.
import * as v from 'valibot';
import { ConfigError } from './config.js';

const portNumber = (fallback: string, min: number) =>
  v.pipe(
    v.optional(v.string(), fallback),
    v.transform(Number),
    v.integer('must be a whole number'),
    v.minValue(min, `must be ${min} to 65535`),
    v.maxValue(65535, `must be ${min} to 65535`),
  );

/** 0: any free port (tests). */
const SimPort = portNumber('8091', 0);
// The demo page's origin goes into the service's CORS_ORIGINS before it listens, so it is fixed.
const DemoPort = portNumber('8092', 1);

export type DevPorts = { simulator: number; demo: number };

/** These port variables from `env`; throws a ConfigError naming each bad one, like loadConfig. */
function parse<Name extends string>(entries: Record<Name, ReturnType<typeof portNumber>>, env: Record<string, string | undefined>): Record<Name, number> {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const result = v.safeParse(v.object(entries), present, { abortPipeEarly: true });
  if (!result.success) {
    const lines = result.issues.map((issue) => `${v.getDotPath(issue) ?? 'environment'}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return result.output as Record<Name, number>;
}

/** SIM_PORT and DEMO_PORT, for `npm run dev`. */
export function loadDevPorts(env: Record<string, string | undefined> = process.env): DevPorts {
  const ports = parse({ SIM_PORT: SimPort, DEMO_PORT: DemoPort }, env);
  return { simulator: ports.SIM_PORT, demo: ports.DEMO_PORT };
}

/** SIM_PORT, for `npm run simulator`. */
export function loadSimulatorPort(env: Record<string, string | undefined> = process.env): number {
  return parse({ SIM_PORT: SimPort }, env).SIM_PORT;
}

/** The one line to print when listening on `port` (set by `variable`) failed this way, if it is the operator's to fix. */
export function portProblem(error: unknown, port: number, variable: string): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') return `Port ${port} (${variable}) is in use: set ${variable} to a free port`;
  if (code === 'EACCES') return `Port ${port} (${variable}) may not be opened by this user: set ${variable} to a port above 1023`;
  return undefined;
}
