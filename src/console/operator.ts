// Who acts through the console, as the events it causes record them: an operator named by the
// platform account they signed in with (`console:<oId>`), where the CLI names an OS user.
import type { Resolver } from '../domain/events.js';

export type ConsoleOperator = Extract<Resolver, { kind: 'operator' }>;

export const consoleOperator = (oId: string): ConsoleOperator => ({ kind: 'operator', name: `console:${oId}` });
