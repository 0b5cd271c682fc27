// The small HTML pages of the sign-in flow (docs/api.md, `GET /fishpi/login`): opened in a popup or a tab, they say in
// Chinese and English what happened and what to do next. No stack, no internal detail. Their
// one style sheet and one script are inline and allowed by hash: the policy allows nothing else.
import type { Context } from 'koa';
import type { SignInRefusal } from '../../domain/login.js';
import { contentSecurityPolicy, htmlPageHeaders, inlineSource } from '../securityHeaders.js';
import { escapeHtml } from '../../system/html.js';

const STYLE =
  'body{font-family:system-ui,-apple-system,"PingFang SC","Microsoft YaHei",sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;' +
  'text-align:center;color:#222}h1{font-size:1.4rem}p{line-height:1.6}button,a.button{font-size:1rem;padding:.5rem 1.5rem;margin:1rem .25rem 0;cursor:pointer}' +
  'a.button{display:inline-block;background:#1a73e8;color:#fff;text-decoration:none;border-radius:4px}strong{word-break:break-all}';
const CLOSE_SCRIPT = "document.getElementById('close').addEventListener('click',function(){window.close()})";
const CSP = contentSecurityPolicy({ 'style-src': inlineSource(STYLE), 'script-src': inlineSource(CLOSE_SCRIPT) });
const CLOSE_BUTTON = '<button type="button" id="close">关闭窗口 / Close this window</button>';

/** A page: escaped paragraphs, then `actions` (trusted HTML) and the close button. */
function page(title: string, paragraphs: string[], actions = ''): string {
  const body = paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('');
  return (
    `<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><h1>${escapeHtml(title)}</h1>${body}` +
    `<p>${actions}${CLOSE_BUTTON}</p><script>${CLOSE_SCRIPT}</script></body></html>`
  );
}

/** Headers every sign-in answer carries: never cached, never framed, never leaking its URL (state, assertion). */
function secure(ctx: Context): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set(htmlPageHeaders(CSP));
}

function send(ctx: Context, status: number, html: string): void {
  secure(ctx);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html;
}

/** The login page's way on to the platform, when the browser is the one holding the connection. */
export function toPlatform(ctx: Context, platformUrl: string): void {
  secure(ctx);
  ctx.redirect(platformUrl);
}

const START_AGAIN = '请回到应用中重新点击登录。 / Go back to the application and start the sign-in again.';

const REFUSALS: Record<SignInRefusal, { status: number; title: string; text: string[] }> = {
  'missing-client-id': {
    status: 400,
    title: '缺少 client_id / Missing client_id',
    text: [
      '登录链接缺少 client_id 参数。 / The sign-in link has no client_id parameter.',
      '请从应用中打开登录页面。 / Open the sign-in page from the application, which adds its client_id.',
    ],
  },
  'unknown-client': {
    status: 404,
    title: '连接不存在 / Connection not found',
    text: [
      '没有与此 client_id 对应的在线连接，它可能已经断开。 / No open connection has this client_id; it may have been closed.',
      '请刷新应用页面后重新登录。 / Reload the application page, then sign in again.',
    ],
  },
  'bound-client': {
    status: 409,
    title: '连接已登录 / Connection already signed in',
    text: [
      '这个连接已经登录，只能在打开它的浏览器中重新登录。 / This connection is signed in already; only the browser that opened it may sign it in again.',
      '请回到应用中，在自己的浏览器里登录。 / Go back to the application and sign in from your own browser.',
    ],
  },
  'unknown-state': {
    status: 400,
    title: '登录链接无效 / Invalid sign-in link',
    text: ['这个登录链接无法识别。 / This sign-in link is not recognised.', START_AGAIN],
  },
  'other-browser': {
    status: 403,
    title: '登录未在此浏览器中开始 / Sign-in started elsewhere',
    text: ['这个登录不是在当前浏览器中开始的，没有任何账号登录。 / This sign-in was not started in this browser; nobody was signed in.', START_AGAIN],
  },
  'used-state': {
    status: 409,
    title: '登录链接已使用 / Sign-in link already used',
    text: ['每个登录链接只能使用一次。 / Each sign-in link works only once.', START_AGAIN],
  },
  expired: {
    status: 410,
    title: '登录链接已过期 / Sign-in link expired',
    text: ['登录链接的有效期已过，登录需要在打开登录页面后尽快完成。 / The link is no longer valid: a sign-in must be completed soon after the sign-in page opens.', START_AGAIN],
  },
  cancelled: {
    status: 400,
    title: '登录已取消 / Sign-in cancelled',
    text: ['你在社区的授权页面上取消了登录，没有任何账号登录。 / The sign-in was cancelled on the community’s consent page; nobody was signed in.', START_AGAIN],
  },
  'invalid-assertion': {
    status: 403,
    title: '登录验证失败 / Sign-in could not be verified',
    text: ['社区返回的登录信息未通过验证，没有任何账号登录。 / The community’s sign-in answer did not pass verification; nobody was signed in.', START_AGAIN],
  },
  'unknown-user': {
    status: 403,
    title: '账号不存在 / Account not found',
    text: ['社区平台找不到这个账号。 / The community platform does not know this account.', START_AGAIN],
  },
  // Only the operator console refuses accounts for who they are; players' sign-ins never do.
  'not-operator': {
    status: 403,
    title: '无权访问 / Not allowed',
    text: ['这个账号不能在这里登录。 / This account may not sign in here.'],
  },
  'platform-unavailable': {
    status: 502,
    title: '社区暂时无法访问 / Community unavailable',
    text: ['暂时无法连接社区平台完成登录。 / The community platform could not be reached to finish the sign-in.', '请稍后重试。 / Please try again in a moment.'],
  },
};

export function refusalPage(ctx: Context, reason: SignInRefusal): void {
  const { status, title, text } = REFUSALS[reason];
  send(ctx, status, page(title, text));
}

export function successPage(ctx: Context, nickname: string, clientBound: boolean): void {
  const text = [`欢迎，${nickname}！ / Welcome, ${nickname}!`];
  text.push(
    clientBound
      ? '你现在可以关闭这个窗口，回到应用。 / You can close this window and go back to the application.'
      : '应用的连接已断开；重新连接后将自动登录。 / The application’s connection had closed; it will be signed in when it reconnects.',
  );
  send(ctx, 200, page('登录成功 / Signed in', text));
}

/**
 * The login page opened by a browser that does not hold the connection (another browser, or one
 * that refused the stream's cookie): names the site that opened the connection and goes on to
 * the platform only when the user says so. Anyone can send someone a login link carrying their
 * own client_id; this page is where that person sees whose connection they would sign in.
 */
export function confirmPage(ctx: Context, origin: string | undefined, platformUrl: string): void {
  const [zh, en] = origin ? [origin, origin] : ['一个未知网站', 'an unknown site'];
  const text = [
    `${zh} 请求用你的社区账号登录它打开的连接。 / ${en} asks to sign in with your community account to the connection it opened.`,
    `只有当你刚刚在 ${zh} 上自己点击了登录，才继续。否则请关闭此窗口：别人可能在借你的账号登录他们的连接。 / ` +
      `Continue only if you just clicked “sign in” on ${en} yourself. Otherwise close this window: someone may be trying to sign their own connection in with your account.`,
  ];
  send(ctx, 200, page('确认登录 / Confirm the sign-in', text, `<a class="button" id="continue" href="${escapeHtml(platformUrl)}">继续登录 / Continue</a>`));
}

/**
 * The answer to an address past its rate of sign-in pages: a whole response (status, headers,
 * page), written before the request reaches koa so that a refusal costs next to nothing.
 */
export function tooManySignInPages(retryAfterSeconds: number): { status: number; headers: Record<string, string>; html: string } {
  const html = page('请求过于频繁 / Too many sign-in pages', [
    '这个网络地址打开登录页面的次数太多。 / Too many sign-in pages were opened from this network address.',
    `请在 ${retryAfterSeconds} 秒后重试。 / Try again in ${retryAfterSeconds} seconds.`,
  ]);
  return {
    status: 429,
    headers: { ...htmlPageHeaders(CSP), 'Cache-Control': 'no-store', 'Content-Type': 'text/html; charset=utf-8', 'Retry-After': String(retryAfterSeconds) },
    html,
  };
}
