// `Idempotency-Key` on admin POSTs. Runs as the last step of an admin route's chain (after the key,
// the permission and the rate limit were checked and the body read): claims the key for the app,
// lets the handler run, and keeps the answer exactly as the client received it. A key bound to a
// platform operation answers for that operation from the log, whatever became of the request.
import type { Middleware } from 'koa';
import { AppError, changedNothing, ClaimInProgressError, StoreUnavailableError, ValidationError } from '../../domain/errors.js';
import { IdempotencyService, type Claim } from '../../services/idempotency.js';
import type { OperationOutcomes } from '../../services/operationOutcomes.js';
import type { OperationClaim } from '../../services/platformOperations.js';
import type { AlongsideWrite } from '../../store/port.js';
import { operationAnswer } from '../../contract/answers.js';
import type { WorkState } from './requestLog.js';
import type { AuthState } from './apiKey.js';
import type { OnUnexpected, RenderError } from './errors.js';

const KEY = /^[\x21-\x7e]{1,255}$/;

/** The request's hold on its Idempotency-Key, for the handler's writes. */
export interface WriteClaim {
  /** Names the key's current use: a retry that takes the key over gets the same name. */
  epoch: string;
  /** Carried by a write so that it lands only while this request holds the claim. */
  fence(): AlongsideWrite;
  /**
   * Like fence, and records this answer in the same append: the handler must then answer exactly
   * this (the key keeps no other).
   */
  fenceWithAnswer(status: number, body: unknown): AlongsideWrite;
}

export interface ClaimedRequestState {
  /** The client's Idempotency-Key, for handlers that pass an end-to-end id downstream. */
  idempotencyKey?: string;
  /** For a platform operation: binds the key to it before it is recorded or sent. */
  operationClaim?: OperationClaim;
  /** For the service's own writes (VIP, pushes, resolutions): fences them with the claim. */
  writeClaim?: WriteClaim;
}

/** What a route keeps of its answer for the key to give again (the whole answer by default). */
export type KeptAnswer = (body: unknown) => unknown;

type Ctx = Parameters<Middleware<ClaimedRequestState & AuthState & WorkState>>[0];

export function idempotency(
  service: IdempotencyService,
  outcomes: OperationOutcomes,
  renderError: RenderError,
  onUnexpected: OnUnexpected,
): (kept?: KeptAnswer) => Middleware<ClaimedRequestState & AuthState & WorkState> {
  return (kept) => (ctx, next) => {
    const idempotencyKey = ctx.get('idempotency-key');
    return idempotencyKey ? claimed(ctx, next, idempotencyKey, kept) : next();
  };

  async function claimed(ctx: Ctx, next: () => Promise<unknown>, idempotencyKey: string, kept: KeptAnswer | undefined): Promise<void> {
    if (!KEY.test(idempotencyKey)) throw new ValidationError('Idempotency-Key: must be 1 to 255 visible ASCII characters');
    const decision = await service.begin(ctx.state.work, ctx.state.actor.appId, idempotencyKey, IdempotencyService.requestHash(ctx.method, ctx.path, ctx.request.body));
    switch (decision.action) {
      case 'wait':
        throw new ClaimInProgressError(1);
      case 'replay':
        ctx.set('Idempotent-Replayed', 'true');
        ctx.status = decision.status;
        ctx.body = decision.body;
        return;
      case 'operation':
        ctx.set('Idempotent-Replayed', 'true');
        try {
          ctx.body = operationAnswer((await outcomes.answer(decision.operationId)).message);
        } catch (error) {
          renderError(ctx, error);
        }
        return;
    }
    let claim: Claim = decision.claim;
    let bound = false;
    let answered = false;
    ctx.state.idempotencyKey = idempotencyKey;
    ctx.state.operationClaim = {
      stream: claim.stream,
      key: idempotencyKey,
      bind: async (operationId) => {
        claim = await service.bind(claim, operationId);
        bound = true;
      },
    };
    ctx.state.writeClaim = {
      epoch: claim.epoch,
      fence: () => service.fence(claim),
      fenceWithAnswer: (status, body) => {
        answered = true;
        return service.fence(claim, { status, body: kept ? kept(body) : body });
      },
    };
    try {
      await next();
    } catch (error) {
      renderError(ctx, error);
      // Free the key only when the request surely changed nothing. An error nobody classified,
      // or the store's own trouble, frees it only while no platform operation is bound: after
      // that, whatever went wrong, the key answers for the operation (a retry must never send it
      // again). The store's trouble is never kept as the key's answer: it says nothing of the
      // request, and a retry finds out from the log what it did.
      const storeTrouble = error instanceof StoreUnavailableError;
      if (changedNothing(error) || (!bound && (storeTrouble || !(error instanceof AppError)))) {
        await endClaim(() => service.release(claim), ctx.path);
        return;
      }
      if (storeTrouble) return;
    }
    // A write that carried its answer recorded it already; anything else is recorded now.
    if (answered && ctx.status === 200) return;
    await endClaim(() => service.complete(claim, ctx.status, kept ? kept(ctx.body) : ctx.body), ctx.path);
  }

  /**
   * The answer stands even when the key's record of it cannot be written: the claim then stays
   * started, a retry waits until it is stale, and a bound operation answers from its own record.
   */
  async function endClaim(record: () => Promise<void>, path: string): Promise<void> {
    await record().catch((error: unknown) => onUnexpected(error, path));
  }
}
