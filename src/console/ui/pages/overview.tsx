// Overview, refreshed every few seconds: what runs, who is connected, how operations end, how the
// platform answers, how far the read models lag.
import type { Overview as OverviewData } from '../../../contract/console.js';
import { ago, when } from '../format.js';
import { useRef } from 'preact/hooks';
import { useApi } from '../hooks.js';
import { Failure, Loading } from '../states.js';
import { Table } from '../table.js';

const KINDS = ['applied', 'rejected', 'failed', 'unknown', 'resolved'] as const;

function OutcomeChart({ minutes }: { minutes: OverviewData['outcomesPerMinute'] }) {
  const max = Math.max(1, ...minutes.map((m) => KINDS.reduce((n, k) => n + m[k], 0)));
  const total = minutes.reduce((n, m) => n + KINDS.reduce((s, k) => s + m[k], 0), 0);
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${minutes.length * 10} 100`} preserveAspectRatio="none" role="img" aria-label={`${total} outcomes in the last hour`}>
        {minutes.map((minute, i) => {
          let y = 100;
          return KINDS.map((kind) => {
            const height = (minute[kind] / max) * 100;
            y -= height;
            return height > 0 ? (
              <rect class={`bar-${kind}`} x={i * 10 + 1} y={y} width={8} height={height}>
                <title>{`${when(minute.minute)}: ${minute[kind]} ${kind}`}</title>
              </rect>
            ) : null;
          });
        })}
      </svg>
      <figcaption>
        {KINDS.map((kind) => (
          <span class={`legend legend-${kind}`}>
            {kind} {minutes.reduce((n, m) => n + m[kind], 0)}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

/** A count of calls that went wrong: a warning only when there is one. */
const Trouble = ({ count, label }: { count: number; label: string }) => (
  <span class={count > 0 ? 'warn' : undefined}>
    {count} {label}
  </span>
);

const STATES: Record<OverviewData['nodes'][number]['state'], string> = {
  live: 'live',
  lapsed: 'lapsed: no heartbeat',
  gone: 'gone',
};

type NodeRow = OverviewData['nodes'][number];

/** A process of a node that has a live process now: what a restart left behind. */
const earlierRun = (rows: readonly NodeRow[], row: NodeRow) => row.state !== 'live' && rows.some((other) => other.node === row.node && other.state === 'live');

export function OverviewPage() {
  const { data, error, reload } = useApi<OverviewData>('/overview', 3000);
  // Behind a load balancer each refresh may be served by another node: say so when it changes.
  const served = useRef<{ node: string; previous?: string } | undefined>(undefined);
  if (data && served.current?.node !== data.node) served.current = { node: data.node, ...(served.current && { previous: served.current.node }) };
  if (!data) return error ? <Failure error={error} retry={reload} /> : <Loading />;
  const calls = data.platformCalls;
  const previous = served.current?.previous;
  return (
    <section>
      <h1>Overview</h1>
      <p class="subtle">
        Live · served by node <code>{data.node}</code>
        {previous && <span class="warn"> (was {previous}: the figures marked "this node" are now this one's)</span>} · updated {when(data.at)}
      </p>
      {error && <Failure error={error} retry={reload} />}
      <div class="cards">
        <div class="card">
          <h2>Open connections</h2>
          <p class="figure">{data.connections.anonymous + data.connections.signedIn}</p>
          <p>
            {data.connections.signedIn} signed in · {data.connections.anonymous} anonymous
          </p>
        </div>
        <div class="card">
          <h2>Platform calls (this node)</h2>
          <p class="figure">{calls.ok + calls.rejected + calls.failed + calls.timeout}</p>
          <p>
            <span class="ok">{calls.ok} ok</span> · {calls.rejected} rejected · <Trouble count={calls.failed} label="failed" /> · <Trouble count={calls.timeout} label="timeout" />
          </p>
        </div>
        <div class="card">
          <h2>Projection lag (this node)</h2>
          <p class="figure">{data.lag.readModels}</p>
          <p>events behind head #{data.lag.head}</p>
        </div>
        <a class={`card ${data.unknownOutcomes > 0 ? 'card-alert' : ''}`} href="#/unknown">
          <h2>Unknown outcomes</h2>
          <p class="figure">{data.unknownOutcomes}</p>
          <p>{data.unknownOutcomes ? 'waiting for an operator' : 'none to resolve'}</p>
        </a>
      </div>
      <h2>Operations per minute, last hour</h2>
      <OutcomeChart minutes={data.outcomesPerMinute} />
      <div class="split">
        <div>
          <h2>Nodes, from their heartbeats</h2>
          <Table
            label="Nodes"
            rows={data.nodes}
            rowKey={(n) => n.instance ?? n.node}
            empty="No node has recorded anything yet."
            columns={[
              {
                label: 'Node',
                sort: (n) => n.node,
                render: (n) =>
                  n.self ? (
                    <strong>
                      <code>{n.node}</code> (this one)
                    </strong>
                  ) : (
                    <>
                      <code>{n.node}</code>
                      {earlierRun(data.nodes, n) && <span class="subtle"> (an earlier run)</span>}
                    </>
                  ),
              },
              { label: 'State', sort: (n) => n.state, render: (n) => <span class={`node-${n.state}`}>{STATES[n.state]}</span> },
              { label: 'Since', sort: (n) => n.since, render: (n) => <span title={when(n.since)}>{ago(n.since)}</span> },
              { label: 'Last write', sort: (n) => n.lastWrite ?? '', render: (n) => (n.lastWrite ? <span title={when(n.lastWrite)}>{ago(n.lastWrite)}</span> : '-') },
            ]}
          />
        </div>
        <div>
          <h2>Platform calls by endpoint (this node)</h2>
          <Table
            label="Platform calls"
            rows={calls.byEndpoint}
            rowKey={(e) => e.endpoint}
            empty="No call to the platform since this node started."
            columns={[
              { label: 'Endpoint', sort: (e) => e.endpoint, render: (e) => <code>{e.endpoint}</code> },
              { label: 'ok', sort: (e) => e.ok, render: (e) => e.ok, className: 'num' },
              { label: 'rejected', sort: (e) => e.rejected, render: (e) => e.rejected, className: 'num' },
              { label: 'failed', sort: (e) => e.failed, render: (e) => e.failed, className: 'num' },
              { label: 'timeout', sort: (e) => e.timeout, render: (e) => e.timeout, className: 'num' },
            ]}
          />
        </div>
      </div>
    </section>
  );
}
