// The console's HTML: the shell the front-end starts in, the pages of its sign-in that say what
// went wrong, and the page that says the console is off. No inline script or style: the policy
// (headers.ts) allows neither.
import type { Context } from 'koa';
import type { SignInRefusal } from '../domain/login.js';
import { escapeHtml } from '../system/html.js';

/** `styled`: with the console's style sheet, which only a console that is on serves. */
function document(title: string, body: string, scripts: string[] = [], styled = true): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${escapeHtml(title)}</title>${styled ? '<link rel="stylesheet" href="/console/assets/console.css">' : ''}</head><body>${body}` +
    scripts.map((src) => `<script type="module" src="${src}"></script>`).join('') +
    `</body></html>`
  );
}

/** The page the front-end renders into; it asks /console/api/me who is signed in. */
export function shellPage(ctx: Context, scripts: string[]): void {
  ctx.type = 'html';
  ctx.body = document('Console · community-bridge', '<div id="app"><noscript><p class="notice">The console needs JavaScript.</p></noscript></div>', scripts);
}

const AGAIN = 'Sign in again from the console.';

const REFUSALS: Partial<Record<SignInRefusal, { status: number; title: string; text: string }>> = {
  'unknown-state': { status: 400, title: 'Invalid sign-in link', text: `This sign-in link is not recognised. ${AGAIN}` },
  'bound-client': { status: 409, title: 'Already signed in', text: `This sign-in is for a connection that is signed in already. ${AGAIN}` },
  'other-browser': { status: 403, title: 'Sign-in started elsewhere', text: `This sign-in was not started in this browser; nobody was signed in. ${AGAIN}` },
  'used-state': { status: 409, title: 'Sign-in link already used', text: `Each sign-in link works only once. ${AGAIN}` },
  expired: { status: 410, title: 'Sign-in link expired', text: `A sign-in must be completed soon after it starts. ${AGAIN}` },
  cancelled: { status: 400, title: 'Sign-in cancelled', text: `The sign-in was cancelled on the community platform; nobody was signed in.` },
  'invalid-assertion': { status: 403, title: 'Sign-in could not be verified', text: `The community platform’s answer did not pass verification; nobody was signed in. ${AGAIN}` },
  'unknown-user': { status: 403, title: 'Unknown account', text: 'The community platform does not know this account; nobody was signed in.' },
  'not-operator': {
    status: 403,
    title: 'Not a console operator',
    text: 'You signed in, but this account may not use the console: ask whoever runs this service to add your oId to CONSOLE_ADMINS.',
  },
  'platform-unavailable': { status: 502, title: 'Community unavailable', text: 'The community platform could not be reached to finish the sign-in. Try again in a moment.' },
};

const FALLBACK = { status: 400, title: 'Sign-in failed', text: AGAIN };

export function refusalPage(ctx: Context, reason: SignInRefusal): void {
  const { status, title, text } = REFUSALS[reason] ?? FALLBACK;
  ctx.status = status;
  ctx.type = 'html';
  ctx.body = document(
    `${title} · Console`,
    `<main class="refusal"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p><p><a class="button" href="/console/login">Sign in</a></p></main>`,
  );
}

/** Where CONSOLE_ADMINS is unset: there is no console here, and this is how it is turned on. */
export function consoleOffPage(ctx: Context): void {
  ctx.status = 404;
  ctx.type = 'html';
  ctx.body = document(
    'Console off · community-bridge',
    '<main><h1>The operator console is off</h1>' +
      '<p>This service runs without its operator console, so there is nothing at <code>/console</code>.</p>' +
      '<p>Whoever runs the service turns it on by setting <code>CONSOLE_ADMINS</code> to the comma-separated oIds of the operators who may use it ' +
      '(for example <code>CONSOLE_ADMINS=1630399136785,1630399136786</code>) and restarting the service. ' +
      'Those operators then sign in here with their community account; anyone else is refused.</p>' +
      '<p>The README’s “Console” section says more.</p></main>',
    [],
    false,
  );
}
