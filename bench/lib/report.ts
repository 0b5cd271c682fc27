// Result rows, the machine, and the two output forms (a table on stderr/stdout, or one JSON doc).
import { cpus, loadavg, totalmem } from 'node:os';

export interface Row {
  /** Scenario name (several rows may share one: one per figure). */
  name: string;
  metric: string;
  value: number;
  /** The same figure for the in-run baseline, or null where the figure has no baseline. */
  baseline: number | null;
  /** value / baseline (for latencies where lower is better the ratio is still value / baseline). */
  ratio: number | null;
  goal: string;
  met: boolean | null;
  [extra: string]: unknown;
}

export interface ScenarioReport {
  name: string;
  rows: Row[];
  memory?: { restMb: number; peakMb: number; note?: string };
  notes?: string[];
}

export function machine() {
  return {
    cores: cpus().length,
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    loadAverageAtStart: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

const fmt = (value: number | null, digits?: number) => {
  if (value === null || Number.isNaN(value)) return '—';
  const d = digits ?? (Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2);
  return value.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
};

export function table(reports: ScenarioReport[]): string {
  const header = ['scenario', 'figure', 'value', 'baseline', 'ratio', 'goal', 'met?'];
  const lines = reports.flatMap((r) =>
    r.rows.map((row) => [row.name, row.metric, fmt(row.value), fmt(row.baseline), fmt(row.ratio, 2), row.goal, row.met === null ? '—' : row.met ? 'yes' : 'NO']),
  );
  const memHeader = ['scenario', 'RSS at rest (MB)', 'RSS peak (MB)', 'process'];
  const memLines = reports.filter((r) => r.memory).map((r) => [r.name, fmt(r.memory!.restMb, 1), fmt(r.memory!.peakMb, 1), r.memory!.note ?? 'service']);
  const notes = reports.flatMap((r) => (r.notes ?? []).map((n) => `- ${r.name}: ${n}`));
  return [markdownTable(header, lines), '', markdownTable(memHeader, memLines), ...(notes.length ? ['', ...notes] : [])].join('\n');
}

export function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}
