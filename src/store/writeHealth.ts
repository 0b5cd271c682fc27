// What the store layer reports about its appends; the services layer decides what a failing
// store means for the node (/readyz, recovery probes).
import { AppError, StoreUnavailableError } from '../domain/errors.js';

/** Domain refusals (a conflict, an oversized append) are the caller's doing, not the store's. */
export function isStoreFailure(error: unknown): boolean {
  return error instanceof StoreUnavailableError || !(error instanceof AppError);
}

/** Told when the store starts failing and when it answers again: an outage is logged once, not per request. */
export interface OutageObserver {
  began(error: unknown): void;
  ended(): void;
}

/** Told the result of each append that reached the store. */
export interface AppendObserver {
  appendSucceeded(): void;
  /** An append failed because of the store (isStoreFailure). */
  appendFailed(error: unknown): void;
}
