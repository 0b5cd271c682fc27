// Prometheus metrics. One registry per service instance (tests run several in one process),
// exposed at GET /metrics.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * A counter of what `histogram` observed, by the same labels, taken from the histogram's counts
 * when scraped: a request or platform call is one metric update rather than two.
 */
function countOf<T extends string>(histogram: Histogram<T>, config: { name: string; help: string; labelNames: readonly T[]; registers: Registry[] }): Counter<T> {
  return new Counter<T>({
    ...config,
    async collect() {
      const { name, values } = await histogram.get();
      this.reset();
      for (const { metricName, labels, value } of values) if (metricName === `${name}_count`) this.inc(labels, value);
    },
  });
}

export function createMetrics() {
  const registry = new Registry();
  // The realtime hub is built after the metrics; it tells how to count its connections later.
  let openConnections = () => 0;
  let clockOffsetMs = () => 0;
  collectDefaultMetrics({ register: registry });
  const seconds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  const httpLabels = ['method', 'route', 'status'] as const;
  const platformLabels = ['endpoint', 'outcome'] as const;
  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: httpLabels,
    buckets: seconds,
    registers: [registry],
  });
  const platformDuration = new Histogram({
    name: 'platform_call_duration_seconds',
    help: 'Duration of calls to the community platform',
    labelNames: platformLabels,
    buckets: seconds,
    registers: [registry],
  });
  return {
    registry,
    httpDuration,
    httpRequests: countOf(httpDuration, { name: 'http_requests_total', help: 'HTTP requests by route and status', labelNames: httpLabels, registers: [registry] }),
    sseConnections: new Gauge({
      name: 'sse_connections_open',
      help: 'Open realtime (SSE) connections on this node',
      registers: [registry],
      collect() {
        this.set(openConnections());
      },
    }),
    countOpenConnections(count: () => number) {
      openConnections = count;
    },
    clockOffset: new Gauge({
      name: 'clock_offset_seconds',
      help: "This node's clock minus the log's clock (past CLOCK_MAX_OFFSET_MS the node is not ready and judges no other node's work)",
      registers: [registry],
      collect() {
        this.set(clockOffsetMs() / 1000);
      },
    }),
    measureClockOffset(offsetMs: () => number) {
      clockOffsetMs = offsetMs;
    },
    eventsAppended: new Counter({ name: 'events_appended_total', help: 'Events appended to the store by this node', registers: [registry] }),
    storeAppendFailures: new Counter({
      name: 'store_append_failures_total',
      help: 'Appends that failed because of the event store (not a conflict or an oversized append)',
      registers: [registry],
    }),
    subscriptionResumes: new Counter({
      name: 'store_subscription_resumes_total',
      help: 'Interruptions of the live subscription to the event store, each followed by a resume',
      registers: [registry],
    }),
    projectionErrors: new Counter({ name: 'projection_errors_total', help: 'Events a read model threw on, by read model', labelNames: ['read_model'], registers: [registry] }),
    projectionLag: new Gauge({ name: 'projection_lag_events', help: 'Events in the store that the read models have not applied yet', registers: [registry] }),
    storeHeldBack: new Gauge({
      name: 'store_followers_held_back_seconds',
      help: 'How long committed events have waited to become readable in log order (PostgreSQL: a transaction in the cluster that wrote and stays open); 0 when none wait',
      registers: [registry],
    }),
    // Both set when scraped (GET /metrics), like the lag.
    ready: new Gauge({ name: 'service_ready', help: '1 when this node would answer /readyz with 200, else 0', registers: [registry] }),
    unknownOutcomes: new Gauge({
      name: 'operations_outcome_unknown',
      help: 'Platform operations whose outcome is unknown and not resolved by an operator (the whole log: every node reports the same)',
      registers: [registry],
    }),
    // Presence and the webhook outbox come from the log: every node reports the same (set when scraped).
    presenceClients: new Gauge({
      name: 'presence_clients',
      help: 'Signed-in realtime clients each live node holds, by node (the log and the heartbeats: every node reports the same)',
      labelNames: ['node'],
      registers: [registry],
    }),
    presenceUsers: new Gauge({
      name: 'presence_users',
      help: 'Users with a signed-in realtime client on each live node, by node (a user on two nodes counts on both)',
      labelNames: ['node'],
      registers: [registry],
    }),
    presenceOnline: new Gauge({ name: 'presence_users_online', help: 'Users online on any live node (what GET /adm/presence lists)', registers: [registry] }),
    webhookAttempts: new Counter({
      name: 'webhook_attempts_total',
      help: 'Webhook attempts this node made, by result (delivered: a 2xx; failed: anything else, retried or given up)',
      labelNames: ['result'],
      registers: [registry],
    }),
    webhookPending: new Gauge({
      name: 'webhook_deliveries_pending',
      help: 'Webhook deliveries not yet made nor given up (the whole log: every node reports the same)',
      registers: [registry],
    }),
    connectionsRefused: new Counter({
      name: 'http_connections_refused_total',
      help: 'Sockets closed as soon as they were accepted, by the bound they were past (address or node)',
      labelNames: ['bound'],
      registers: [registry],
    }),
    realtimeConnectsRefused: new Counter({
      name: 'realtime_connects_refused_total',
      help: 'Realtime connects refused for their rate, by the bound they were past (address or node)',
      labelNames: ['bound'],
      registers: [registry],
    }),
    signInPagesRefused: new Counter({
      name: 'sign_in_pages_refused_total',
      help: 'Login pages and sign-in callbacks refused, by the bound they were past (address or node)',
      labelNames: ['bound'],
      registers: [registry],
    }),
    platformDuration,
    platformCalls: countOf(platformDuration, {
      name: 'platform_calls_total',
      help: 'Calls to the community platform by endpoint and outcome',
      labelNames: platformLabels,
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
