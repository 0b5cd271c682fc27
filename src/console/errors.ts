// The console's refusals, as refinements of the service's own errors so that the one error
// mapping (src/http/middleware/errors.ts) answers them in the usual `{code, message, data}` form.
import { InvalidApiKeyError, PermissionDeniedError } from '../domain/errors.js';

/** No live console session on the request (401). */
export class ConsoleSignInRequiredError extends InvalidApiKeyError {
  constructor() {
    super();
    this.message = 'Sign in to the console first: /console/login';
  }
}

/** Signed in, but the account is not (or no longer) listed in CONSOLE_ADMINS (403). */
export class NotAnOperatorError extends PermissionDeniedError {
  constructor() {
    super();
    this.message = 'This account may not use the console';
  }
}

/** A console change without the session's token in X-Console-Token (403). */
export class ConsoleTokenError extends PermissionDeniedError {
  constructor() {
    super();
    this.message = 'X-Console-Token: missing or not this session’s token';
  }
}
