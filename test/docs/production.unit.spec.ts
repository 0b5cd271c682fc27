// docs/production.md stays true to what it points at: every section says what checks it, every
// sizing figure is one the benchmarks recorded, every scenario, metric, alert and variable it
// names exists. (Its links are checked by links.unit.spec.ts.)
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { SECRET_VARIABLES } from '../../src/secretFiles.js';

/** Upper-case names in the guide that are not environment variables: a constant, a frame. */
const NOT_SETTINGS = new Set(['SECRET_VARIABLES', 'PB_CONNECT']);

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const guide = read('docs/production.md');

/** The text of a `## ` section, up to the next one. */
function section(title: string): string {
  const start = guide.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, `a section "${title}"`);
  const end = guide.indexOf('\n## ', start + 1);
  return guide.slice(start, end < 0 ? undefined : end);
}

/** The rows of the first table in `text`, as cells, without its header and rule. */
function tableRows(text: string): string[][] {
  const lines = text.split('\n').filter((line) => line.startsWith('|'));
  return lines.slice(2).map((line) =>
    line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim()),
  );
}

const codeSpans = (text: string) => [...text.replace(/^```[\s\S]*?^```/gm, '').matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!);

/** The scenario names `npm run bench -- --only` takes (bench/run.ts's two tables of scenarios). */
function benchScenarios(): Set<string> {
  const run = read('bench/run.ts');
  const names = new Set<string>();
  for (const [, body] of run.matchAll(/^const (?:SCENARIOS|ON_REQUEST)\b[^\n]*?= \{([^}]*)\}/gm)) {
    for (const entry of body!.split(',')) {
      const key = entry.split(':')[0]!.trim().replace(/'/g, '');
      if (key) names.add(key);
    }
  }
  return names;
}

test('every section says what checks it', () => {
  const sections = guide.split('\n## ').slice(1);
  assert.ok(sections.length >= 7, 'the seven parts');
  for (const text of sections) assert.match(text, /\*\*Checked by\*\*/, `"${text.split('\n')[0]}" names its check`);
});

test('every sizing figure appears in bench/RESULTS.md or bench/HISTORY.md, and every scenario is one the bench runs', () => {
  const recorded = read('bench/RESULTS.md') + read('bench/HISTORY.md');
  const scenarios = benchScenarios();
  assert.ok(scenarios.has('replay') && scenarios.has('soak'), 'scenarios read from bench/run.ts');
  const rows = tableRows(section('Sizing'));
  assert.ok(rows.length >= 5, 'memory per events, per connection, disk');
  for (const [what, measured, , scenario] of rows) {
    const figures = measured!.match(/\d[\d,]*(?:\.\d+)?/g) ?? [];
    assert.ok(figures.length > 0, `${what}: a measured figure`);
    for (const figure of figures) assert.ok(recorded.includes(figure), `${what}: ${figure} is not in the benchmark results`);
    for (const name of codeSpans(scenario!).filter((span) => !span.includes('/'))) assert.ok(scenarios.has(name), `${what}: no bench scenario ${name}`);
  }
  for (const [, names] of guide.matchAll(/--only ([a-z][a-z,-]*)/g)) for (const name of names!.split(',')) assert.ok(scenarios.has(name), `--only ${name}`);
});

test('every metric the guide names is one the service exports, and its alert table is deploy/alerts.yml', () => {
  const exported = new Set([...read('src/metrics.ts').matchAll(/name: '([a-z_]+)'/g)].map((match) => match[1]!));
  const named = codeSpans(guide).filter((span) => /^[a-z]+(?:_[a-z]+)+_(?:total|seconds|events|open|unknown|ready)$/.test(span));
  assert.ok(named.length >= 8, 'metrics named');
  for (const name of named) assert.ok(exported.has(name), `${name} is not in src/metrics.ts`);

  const alerts = (parse(read('deploy/alerts.yml')) as { groups: { rules: { alert: string }[] }[] }).groups.flatMap((group) => group.rules.map((rule) => rule.alert));
  const documented = tableRows(section('Metrics and alerts')).map(([alert]) => alert!.replace(/`/g, ''));
  assert.equal(documented, alerts);
});

test('every variable the guide names is a setting of the service', () => {
  const config = read('src/config.ts');
  const schema = config.slice(config.indexOf('const EnvSchema'), config.indexOf('\n});', config.indexOf('const EnvSchema')));
  const settings = new Set([...schema.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)].map((match) => match[1]!));
  assert.ok(settings.has('TRUST_PROXY'), 'settings read from src/config.ts');
  const fromFiles = new Set(SECRET_VARIABLES.map((name) => `${name}_FILE`));
  const named = codeSpans(guide).filter((span) => /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(span) && !NOT_SETTINGS.has(span));
  assert.ok(named.length >= 10, 'variables named');
  for (const name of named) assert.ok(settings.has(name) || fromFiles.has(name), `${name} is not a setting`);
});

test.run();
