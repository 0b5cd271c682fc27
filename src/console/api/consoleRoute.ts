// The console's endpoints are declared as the API's routes are (src/http/route.ts), over the
// console's context and deps, and mounted by the same code behind an operator's session.
import type { ParameterizedContext } from 'koa';
import { operatorRoutes, type OperatorRoute } from '../../http/route.js';
import type { ConsoleDeps } from '../deps.js';
import type { OperatorState } from '../guards.js';

export type ConsoleContext = ParameterizedContext<OperatorState>;

export type ConsoleRoute = OperatorRoute<ConsoleContext, ConsoleDeps>;

export const consoleRoute = operatorRoutes<ConsoleContext, ConsoleDeps>();
