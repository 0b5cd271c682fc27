// `audit points|medals|items|vip <oId>`: the same entries the audit endpoints answer, the whole
// history at once, oldest first. `--json` prints them as one JSON array.
import { ValidationError } from '../domain/errors.js';
import { OID_PATTERN, OID_RULE } from '../domain/user.js';
import { WHOLE_HISTORY, type AuditQueries, type ItemsAuditEntry, type MedalAuditEntry, type PointsAuditEntry, type VipAuditEntry } from '../projections/audit.js';
import { escapeControl, table } from './table.js';

type Print = (text: string) => void;

const signed = (n: number) => (n > 0 ? `+${n}` : String(n));

type Outcome = PointsAuditEntry['outcome'];

function detailOf(outcome: Outcome): string {
  const { resolution } = outcome;
  if (resolution) return `resolved by ${resolution.by.kind === 'operator' ? resolution.by.name : resolution.by.appId}${resolution.note ? `: ${resolution.note}` : ''}`;
  return outcome.message ?? outcome.reason ?? '';
}

function pointsTable(entries: PointsAuditEntry[]): string {
  return table([
    ['TIME', 'APP', 'KEY', 'POINT', 'MEMO', 'OUTCOME', 'DETAIL'],
    ...entries.map((e) => [e.time, e.appId, e.keyId, signed(e.request.point), e.request.memo, e.outcome.status, detailOf(e.outcome)]),
  ]);
}

function medalsTable(entries: MedalAuditEntry[]): string {
  return table([
    ['TIME', 'APP', 'KEY', 'ACTION', 'MEDAL', 'OUTCOME', 'DETAIL'],
    ...entries.map((e) => [e.time, e.appId, e.keyId, e.action, e.request.name, e.outcome.status, detailOf(e.outcome)]),
  ]);
}

function itemsTable(entries: ItemsAuditEntry[]): string {
  return table([
    ['TIME', 'APP', 'KEY', 'ITEM', 'SUM', 'OUTCOME', 'DETAIL'],
    ...entries.map((e) => [e.time, e.appId, e.keyId, e.request.item, signed(e.request.sum), e.outcome.status, detailOf(e.outcome)]),
  ]);
}

function vipTable(entries: VipAuditEntry[]): string {
  return table([
    ['TIME', 'APP', 'KEY', 'ACTION', 'QUALITY', 'EXPIRED', 'PREVIOUSLY', 'RECORD'],
    ...entries.map((e) => [e.time, e.appId, e.keyId, e.action, e.quality, e.expired, e.previousExpired ?? '-', e.recordId]),
  ]);
}

/** A history read, with its table for people. */
interface Read {
  items: unknown[];
  table(): string;
}

const read = <E>(page: Promise<{ items: E[] }>, toTable: (entries: E[]) => string): Promise<Read> => page.then(({ items }) => ({ items, table: () => toTable(items) }));

/** Each history: how to read it, and what an empty one has none of. */
const HISTORIES: Record<string, { read(audit: AuditQueries, oId: string): Promise<Read>; none: string }> = {
  points: { read: (audit, oId) => read(audit.points(oId, WHOLE_HISTORY), pointsTable), none: 'points edits' },
  medals: { read: (audit, oId) => read(audit.medals(oId, WHOLE_HISTORY), medalsTable), none: 'medal gives or removals' },
  items: { read: (audit, oId) => read(audit.items(oId, WHOLE_HISTORY), itemsTable), none: 'item edits' },
  vip: { read: (audit, oId) => read(audit.vip(oId, WHOLE_HISTORY), vipTable), none: 'VIP grants or renewals' },
};

export async function auditCommand(audit: AuditQueries, args: string[], options: { json?: boolean }, print: Print): Promise<void> {
  const [kind, given] = args;
  const chosen = kind !== undefined && Object.hasOwn(HISTORIES, kind) ? HISTORIES[kind]! : undefined;
  if (!chosen) throw new ValidationError(`audit: unknown history "${escapeControl(kind ?? '')}" (${Object.keys(HISTORIES).join(', ')})`);
  const oId = given?.trim();
  if (!oId) throw new ValidationError(`audit ${kind}: the oId is required`);
  // The rule every request's oId follows, so the CLI finds exactly the entries the API would.
  if (!OID_PATTERN.test(oId)) throw new ValidationError(`audit ${kind}: oId must be the platform's user id (${OID_RULE})`);
  const history = await chosen.read(audit, oId);
  if (options.json) return print(`${JSON.stringify(history.items)}\n`);
  if (history.items.length === 0) return print(`No ${chosen.none} recorded for oId ${oId}.\n`);
  print(history.table());
}
