// `webhooks …`: an operator manages apps' webhook endpoints on the store a running service uses:
// list, add (the secret is printed once), remove, rotate, disable, enable, the latest attempts,
// and sending an event again. A running service sees each change through the store's subscription.
import type { WorkContext } from '../system/workContext.js';
import { ValidationError } from '../domain/errors.js';
import { WEBHOOK_EVENT_TYPES } from '../domain/events.js';
import { ATTEMPTS_KEPT, EVENT_ID, isWebhookEventType } from '../domain/webhook.js';
import { DEFAULT_ATTEMPTS } from '../contract/requests.js';
import type { ApiKeysReadModel } from '../projections/apiKeys.js';
import { attemptViews, endpointView, type WebhookService } from '../services/webhooks.js';
import type { Clock } from '../system/clock.js';
import { escapeControl, table } from './table.js';

type Print = (text: string) => void;

export interface WebhooksCommandOptions {
  'app-id'?: string;
  url?: string;
  events?: string;
  description?: string;
  limit?: string;
  json?: boolean;
}

function parseEvents(text: string | undefined) {
  const known = `${WEBHOOK_EVENT_TYPES.join(', ')}`;
  if (!text) throw new ValidationError(`--events: required (comma-separated from: ${known})`);
  const types = [
    ...new Set(
      text
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = types.filter((t) => !isWebhookEventType(t));
  if (unknown.length > 0 || types.length === 0) throw new ValidationError(`--events: unknown event type ${unknown.join(', ') || '(none)'}; known: ${known}`);
  return types.filter(isWebhookEventType);
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_ATTEMPTS;
  const limit = Number(text);
  if (!/^\d{1,6}$/.test(text) || limit < 1 || limit > ATTEMPTS_KEPT) throw new ValidationError(`--limit: must be a whole number from 1 to ${ATTEMPTS_KEPT}`);
  return limit;
}

export async function webhooksCommand(
  deps: { webhooks: WebhookService; keys: Pick<ApiKeysReadModel, 'appName'>; pendingCount(endpointId: string): number; clock: Clock; work: WorkContext },
  args: string[],
  options: WebhooksCommandOptions,
  print: Print,
): Promise<void> {
  const { webhooks } = deps;
  const context = { work: deps.work };
  const [action, id, eventId] = args;
  const view = (endpointId: string) => endpointView(webhooks.get(endpointId), deps.pendingCount(endpointId), deps.clock.now());
  const needId = () => {
    if (!id) throw new ValidationError(`webhooks ${action}: the endpoint id is required`);
    return id;
  };
  switch (action) {
    case 'list': {
      const listed = webhooks.list(options['app-id']).map((e) => view(e.endpointId));
      if (options.json) return print(`${JSON.stringify(listed)}\n`);
      if (listed.length === 0) return print('No webhook endpoints. Add one with: webhooks add --app-id <id> --url <https url> --events <types>\n');
      return print(
        table([
          ['ID', 'APP ID', 'STATUS', 'PENDING', 'EVENTS', 'URL'],
          ...listed.map((e) => [e.id, e.appId, e.disabled?.reason === 'failing' ? 'disabled (failing)' : e.status, String(e.pending), e.events.join(','), e.url]),
        ]),
      );
    }
    case 'add': {
      const appId = options['app-id'];
      if (!appId) throw new ValidationError('--app-id: required (the app the endpoint belongs to)');
      if (deps.keys.appName(appId) === undefined) throw new ValidationError(`--app-id: no app has the id ${appId} (an app exists once it has a key)`);
      if (!options.url) throw new ValidationError('--url: required (https, or http to a loopback address for development)');
      const events = parseEvents(options.events);
      const { endpoint, secret } = await webhooks.register({ appId, url: options.url, events, description: options.description?.trim() }, context).catch((error: unknown) => {
        // The service names its inputs as the API does; here they are flags.
        if (error instanceof ValidationError) error.message = error.message.replace(/^url:/, '--url:').replace(/^events:/, '--events:');
        throw error;
      });
      const shown = view(endpoint.endpointId);
      if (options.json) return print(`${JSON.stringify({ endpoint: shown, secret })}\n`);
      return print(
        `Added webhook endpoint ${shown.id} for app ${shown.appId}: ${escapeControl(shown.url)}\nEvents: ${shown.events.join(', ')}\n\n` +
          `  ${secret}\n\nThis is the only time the signing secret is shown; receivers verify Bridge-Signature with it.\n`,
      );
    }
    case 'remove': {
      await webhooks.remove(needId(), context);
      if (options.json) return print(`${JSON.stringify({ id, deleted: true })}\n`);
      return print(`Webhook endpoint ${id} is deleted\n`);
    }
    case 'rotate': {
      const { secret, previousUntil } = await webhooks.rotate(needId(), context);
      if (options.json) return print(`${JSON.stringify({ endpoint: view(needId()), secret, previousValidUntil: previousUntil })}\n`);
      return print(`New signing secret of ${id}:\n\n  ${secret}\n\nThe previous secret also signs until ${previousUntil}. This is the only time the secret is shown.\n`);
    }
    case 'disable':
    case 'enable': {
      await webhooks[action](needId(), context);
      const shown = view(needId());
      if (options.json) return print(`${JSON.stringify(shown)}\n`);
      return print(`Webhook endpoint ${id} is ${shown.status}\n`);
    }
    case 'attempts': {
      const attempts = attemptViews(webhooks.attempts(needId(), parseLimit(options.limit)));
      if (options.json) return print(`${JSON.stringify(attempts)}\n`);
      if (attempts.length === 0) return print(`No attempts yet for ${id}.\n`);
      return print(
        table([
          ['STARTED', 'EVENT', 'TYPE', 'ATTEMPT', 'NODE', 'RESULT', 'STATUS', 'MS', 'NEXT', 'ERROR'],
          ...attempts.map((a) => [
            a.started,
            a.eventId,
            a.type,
            String(a.attempt),
            a.node,
            a.result,
            a.status === undefined ? '-' : String(a.status),
            a.durationMs === undefined ? '-' : String(a.durationMs),
            a.retryAt ?? '-',
            a.error ?? '',
          ]),
        ]),
      );
    }
    case 'resend': {
      if (!eventId || !EVENT_ID.test(eventId)) throw new ValidationError('webhooks resend: the endpoint id and the event id (evt_…) are required');
      const { deliveryId } = await webhooks.resend(needId(), eventId, context);
      if (options.json) return print(`${JSON.stringify({ eventId, deliveryId })}\n`);
      return print(`Event ${eventId} goes to ${id} again now (a running service sends it)\n`);
    }
    default:
      throw new ValidationError(`webhooks: unknown action "${action ?? ''}" (list, add, remove, rotate, disable, enable, attempts, resend)`);
  }
}
