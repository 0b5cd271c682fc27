// What the service makes of the projection runner's troubles: a log line and a metric each.
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { SubscriptionInterruptedError } from '../store/port.js';
import { describeFailure, type RunnerObserver } from './runner.js';

export function reportRunnerTrouble(log: Logger, metrics: Pick<Metrics, 'projectionErrors' | 'subscriptionResumes'>): RunnerObserver {
  return {
    projectionFailed(failure) {
      metrics.projectionErrors.inc({ read_model: failure.readModel });
      log.error({ err: failure.error, readModel: failure.readModel, position: failure.event.position }, describeFailure(failure));
    },
    subscriptionTrouble(error) {
      if (error instanceof SubscriptionInterruptedError) {
        metrics.subscriptionResumes.inc();
        log.warn({ cause: error.cause.message, after: error.after, attempt: error.attempt, retryInMs: error.retryInMs }, 'event store subscription interrupted; resuming');
      } else {
        log.error({ err: error }, 'event store subscription trouble');
      }
    },
  };
}
