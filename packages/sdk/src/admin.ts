// The admin API (`/adm/…`) for application servers: one method per endpoint, typed bodies in and
// out, failures as the BridgeError subclass that says how to handle them (errors.ts). Every POST
// carries an Idempotency-Key so that its retries (transport.ts) cannot apply it twice.
import { idempotencyKeyOf } from './idempotencyKey.js';
import { createTransport, expectSuccess, type Send, type TransportOptions } from './transport.js';
import type * as api from './types.js';

export type AdminClientOptions = TransportOptions;

export interface CallOptions {
  /** Sent as Idempotency-Key (default: a new random UUID per call; 1 to 255 visible ASCII characters). Reuse it to retry a call later without applying it twice. */
  idempotencyKey?: string;
}

/** Which operations `operations.list` answers: by status (default both), by what a caller quotes, at most `limit` (default 50, at most 500). */
export interface OperationFilter {
  status?: 'unknown' | 'pending';
  /** Text of an Idempotency-Key, X-Request-Id or operation id. */
  search?: string;
  limit?: number;
}

/** Audit and presence paging: `limit` entries (default 50, at most 500) after or before a log position (`next` / `prev` of a page). */
export interface AuditPaging {
  limit?: number;
  after?: number;
  before?: number;
}

export interface AdminClient {
  points: {
    edit(body: api.PointsEditBody, options?: CallOptions): Promise<api.OperationAnswer>;
  };
  medal: {
    give(body: api.MedalGiveBody, options?: CallOptions): Promise<api.SuccessBody>;
    remove(body: api.MedalRemoveBody, options?: CallOptions): Promise<api.SuccessBody>;
  };
  items: {
    query(body: api.ItemsQueryBody, options?: CallOptions): Promise<api.ItemsBody>;
    edit(body: api.ItemsEditBody, options?: CallOptions): Promise<api.SuccessBody>;
  };
  liveness: {
    get(oId: string): Promise<api.LivenessBody>;
  };
  vip: {
    get(oId: string): Promise<api.VipListBody>;
    submit(body: api.VipSubmitBody, options?: CallOptions): Promise<api.VipSubmitAnswer>;
    batchSubmit(body: api.VipBatchBody, options?: CallOptions): Promise<api.VipBatchAnswer>;
  };
  message: {
    push(body: api.MessagePushBody, options?: CallOptions): Promise<api.PushAnswer>;
  };
  user: {
    /** The client and its user when signed in; `null` when no such client is connected (it never was, or it disconnected). */
    get(clientId: string): Promise<api.UserGetAnswer | null>;
  };
  audit: {
    points(oId: string, page?: AuditPaging): Promise<api.PointsAuditPage>;
    vip(oId: string, page?: AuditPaging): Promise<api.VipAuditPage>;
    medals(oId: string, page?: AuditPaging): Promise<api.MedalAuditPage>;
    items(oId: string, page?: AuditPaging): Promise<api.ItemsAuditPage>;
  };
  operations: {
    /** Operations whose outcome is not known (`GET /adm/operations`), oldest first, with the Idempotency-Key and X-Request-Id their callers sent. */
    list(filter?: OperationFilter): Promise<api.OperationListAnswer>;
    /** Records what someone who checked the platform found for an unknown outcome (`POST /adm/operations/:operationId/resolve`). */
    resolve(operationId: string, body: api.ResolveBody, options?: CallOptions): Promise<api.ResolveAnswer>;
  };
  presence: {
    /** The users online now on any live node (`GET /adm/presence`), online longest first, paged like the audit. */
    list(page?: AuditPaging): Promise<api.PresencePage>;
    /** Whether one user is online now, with how many clients and since when (`GET /adm/presence/:oId`). */
    get(oId: string): Promise<api.PresenceAnswer>;
  };
}

const CLIENT_NOT_FOUND: api.ClientNotFoundBody['message'] = 'Client not found or disconnected.';

/** Throws a TypeError, naming the option, for a malformed apiKey, baseUrl, timeoutMs or maxAttempts. */
export function createAdminClient(options: AdminClientOptions): AdminClient {
  const send: Send = createTransport(options);

  const post = async <T>(path: string, body: unknown, call: CallOptions = {}): Promise<T> => {
    const idempotencyKey = idempotencyKeyOf(call.idempotencyKey);
    return expectSuccess<T>(await send({ method: 'POST', path, body, idempotencyKey }), idempotencyKey);
  };
  const get = async <T>(path: string, query?: Record<string, string | number | undefined>): Promise<T> =>
    expectSuccess<T>(await send({ method: 'GET', path, ...(query && { query }) }));
  const oIdPath = (prefix: string, oId: string) => `${prefix}/${encodeURIComponent(oId)}`;

  return {
    points: {
      edit: (body, call) => post('/adm/points/edit', body, call),
    },
    medal: {
      give: (body, call) => post('/adm/medal/give', body, call),
      remove: (body, call) => post('/adm/medal/remove', body, call),
    },
    items: {
      query: (body, call) => post('/adm/items/query', body, call),
      edit: (body, call) => post('/adm/items/edit', body, call),
    },
    liveness: {
      get: (oId) => get(oIdPath('/adm/liveness', oId)),
    },
    vip: {
      get: (oId) => get(oIdPath('/adm/vip', oId)),
      submit: (body, call) => post('/adm/vip/submit', body, call),
      batchSubmit: (body, call) => post('/adm/vip/batch-submit', body, call),
    },
    message: {
      push: (body, call) => post('/adm/message/push', body, call),
    },
    user: {
      async get(clientId) {
        const answer = await send({ method: 'GET', path: '/adm/user/get', query: { client_id: clientId } });
        // The spec's own body for a client that is not connected: an answer, not a failure.
        if (answer.status === 404 && (answer.body as Partial<api.ClientNotFoundBody> | undefined)?.message === CLIENT_NOT_FOUND) return null;
        return expectSuccess<api.UserGetAnswer>(answer);
      },
    },
    audit: {
      points: (oId, page) => get(oIdPath('/adm/audit/points', oId), { ...page }),
      vip: (oId, page) => get(oIdPath('/adm/audit/vip', oId), { ...page }),
      medals: (oId, page) => get(oIdPath('/adm/audit/medals', oId), { ...page }),
      items: (oId, page) => get(oIdPath('/adm/audit/items', oId), { ...page }),
    },
    operations: {
      list: (filter) => get('/adm/operations', { ...filter }),
      resolve: (operationId, body, call) => post(`/adm/operations/${encodeURIComponent(operationId)}/resolve`, body, call),
    },
    presence: {
      list: (page) => get('/adm/presence', { ...page }),
      get: (oId) => get(oIdPath('/adm/presence', oId)),
    },
  };
}
