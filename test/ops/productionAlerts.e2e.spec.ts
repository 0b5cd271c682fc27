// docs/production.md, "Metrics and alerts": deploy/alerts.yml is a Prometheus rule file whose
// every metric the service exports at GET /metrics, and the gauges the alerts rest on move as the
// alerts say: an unknown outcome shows until an operator resolves it, readiness as /readyz.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { ALICE, startHarness, type Harness } from '../support/harness.js';

const RULES_FILE = new URL('../../deploy/alerts.yml', import.meta.url);
/** Recorded by Prometheus itself for every scrape, not exported by the service. */
const PROMETHEUS_OWN = new Set(['up']);
/** PromQL words that look like metric names. */
const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset']);

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: string };
  annotations: { summary: string; description: string };
}

function rules(): Rule[] {
  const document = parse(readFileSync(RULES_FILE, 'utf8')) as { groups: { name: string; rules: Rule[] }[] };
  return document.groups.flatMap((group) => group.rules);
}

/** The metric names an expression reads: what is left once strings, matchers, ranges, label lists and function calls are taken out. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = [...bare.matchAll(/\b[a-zA-Z_:][a-zA-Z0-9_:]*\b(?!\s*\()/g)].map((match) => match[0]).filter((word) => !PROMQL_WORDS.has(word));
  return [...new Set(names)];
}

/** Metric families in a Prometheus text exposition, by their `# TYPE` lines. */
function exported(text: string): Set<string> {
  return new Set([...text.matchAll(/^# TYPE (\S+) \S+$/gm)].map((match) => match[1]!));
}

/** The value of a sample without labels, or of the first sample whose labels include `labels`. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? '{' : ' '}`) && (!labels || l.includes(labels)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function withHarness(run: (h: Harness) => Promise<void>): Promise<void> {
  const h = await startHarness();
  try {
    await run(h);
  } finally {
    await h.close();
  }
}

test('deploy/alerts.yml parses as a Prometheus rule file, with the alerts the guide names', () => {
  const document = parse(readFileSync(RULES_FILE, 'utf8')) as { groups: { name: unknown; rules: unknown[] }[] };
  assert.ok(Array.isArray(document.groups) && document.groups.length > 0);
  for (const group of document.groups) {
    assert.type(group.name, 'string');
    assert.ok(Array.isArray(group.rules) && group.rules.length > 0);
  }
  const all = rules();
  assert.is(new Set(all.map((rule) => rule.alert)).size, all.length, 'alert names are unique');
  for (const rule of all) {
    assert.match(rule.alert, /^[A-Z][A-Za-z]+$/);
    assert.type(rule.expr, 'string');
    if (rule.for !== undefined) assert.match(rule.for, /^\d+[smh]$/, `${rule.alert}: for`);
    assert.ok(['critical', 'warning'].includes(rule.labels.severity), `${rule.alert}: severity`);
    assert.ok(rule.annotations.summary.length > 0 && rule.annotations.description.length > 0, `${rule.alert}: annotations`);
    assert.ok(metricNames(rule.expr).length > 0, `${rule.alert}: reads a metric`);
  }
  const reads = (alert: string) => metricNames(all.find((rule) => rule.alert === alert)?.expr ?? '');
  assert.equal(reads('CommunityBridgeUnknownOutcomes'), ['operations_outcome_unknown']);
  assert.equal(reads('CommunityBridgeProjectionLag'), ['projection_lag_events']);
  assert.equal(reads('CommunityBridgeFollowersHeldBack'), ['store_followers_held_back_seconds']);
  assert.equal(reads('CommunityBridgeNotReady'), ['service_ready']);
  assert.equal(reads('CommunityBridgePlatformFailures'), ['platform_calls_total']);
  assert.equal(reads('CommunityBridgeClockOffset'), ['clock_offset_seconds']);
});

test('the metric-name reader skips functions, label matchers, ranges and grouping labels', () => {
  assert.equal(metricNames('sum by (job, outcome) (rate(a_total{outcome=~"failed|timeout"}[5m])) / on (job) b_total > 0.05'), ['a_total', 'b_total']);
  assert.equal(metricNames('abs(clock_offset_seconds{job="x"}) > 1 and up == 1'), ['clock_offset_seconds', 'up']);
});

test('every metric the rules read is exported at GET /metrics (up is Prometheus own)', () =>
  withHarness(async (h) => {
    const metrics = await h.get('/metrics');
    assert.is(metrics.status, 200);
    const families = exported(metrics.text);
    const used = [...new Set(rules().flatMap((rule) => metricNames(rule.expr)))];
    const missing = used.filter((name) => !families.has(name) && !PROMETHEUS_OWN.has(name));
    assert.equal(missing, [], `not in /metrics: ${missing.join(', ')}`);
    assert.ok(
      used.some((name) => PROMETHEUS_OWN.has(name)),
      'the rules also watch the scrape itself',
    );
  }));

test('operations_outcome_unknown counts an unknown outcome until it is resolved; the failure shows in platform_calls_total', () =>
  withHarness(async (h) => {
    const { key } = await h.key();
    const before = (await h.get('/metrics')).text;
    assert.is(sample(before, 'operations_outcome_unknown'), 0);
    assert.is(sample(before, 'service_ready'), 1);

    h.sim.faultNext('/user/edit/points', { kind: 'applyThenReset' });
    const sent = await h.post('/adm/points/edit', { oId: ALICE.oId, point: 5, memo: 'alerted' }, key);
    assert.is(sent.status, 502, sent.text);
    assert.is(sent.body.data.status, 'unknown');
    const during = (await h.get('/metrics')).text;
    assert.is(sample(during, 'operations_outcome_unknown'), 1);
    const failed = (sample(during, 'platform_calls_total', 'outcome="failed"') ?? 0) + (sample(during, 'platform_calls_total', 'outcome="timeout"') ?? 0);
    assert.ok(failed >= 1, 'the reset call counts as failed or timed out');

    const resolved = await h.post(`/adm/operations/${sent.body.data.operationId}/resolve`, { applied: true, note: 'seen in the ledger' }, key);
    assert.is(resolved.status, 200, resolved.text);
    assert.is(sample((await h.get('/metrics')).text, 'operations_outcome_unknown'), 0);
  }));

test('service_ready follows /readyz: 0 once the store is gone', () =>
  withHarness(async (h) => {
    assert.is(sample((await h.get('/metrics')).text, 'service_ready'), 1);
    await h.service.deps.store.close();
    assert.is((await h.get('/readyz')).status, 503);
    const after = await h.get('/metrics');
    assert.is(after.status, 200);
    assert.is(sample(after.text, 'service_ready'), 0);
  }));

test.run();
