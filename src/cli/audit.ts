// `audit points <oId>` and `audit vip <oId>`: the same entries the audit endpoints answer, the
// whole history at once, oldest first. `--json` prints them as one JSON array.
import { ValidationError } from '../domain/errors.js';
import { OID_PATTERN, OID_RULE } from '../domain/user.js';
import { WHOLE_HISTORY, type AuditQueries, type PointsAuditEntry, type VipAuditEntry } from '../projections/audit.js';
import { escapeControl, table } from './table.js';

type Print = (text: string) => void;

const signed = (n: number) => (n > 0 ? `+${n}` : String(n));

function detailOf(outcome: PointsAuditEntry['outcome']): string {
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

function vipTable(entries: VipAuditEntry[]): string {
  return table([
    ['TIME', 'APP', 'KEY', 'ACTION', 'QUALITY', 'EXPIRED', 'PREVIOUSLY', 'RECORD'],
    ...entries.map((e) => [e.time, e.appId, e.keyId, e.action, e.quality, e.expired, e.previousExpired ?? '-', e.recordId]),
  ]);
}

export async function auditCommand(audit: AuditQueries, args: string[], options: { json?: boolean }, print: Print): Promise<void> {
  const [kind, oId] = args;
  if (kind !== 'points' && kind !== 'vip') throw new ValidationError(`audit: unknown history "${kind ?? ''}" (points, vip)`);
  if (!oId?.trim()) throw new ValidationError(`audit ${kind}: the oId is required`);
  if (!OID_PATTERN.test(oId.trim())) throw new ValidationError(`audit ${kind}: oId must be the platform's user id (${OID_RULE})`);
  const { items: entries } = kind === 'points' ? await audit.points(oId.trim(), WHOLE_HISTORY) : await audit.vip(oId.trim(), WHOLE_HISTORY);
  if (options.json) return print(`${JSON.stringify(entries)}\n`);
  if (entries.length === 0) return print(`No ${kind === 'points' ? 'points edits' : 'VIP grants or renewals'} recorded for oId ${escapeControl(oId)}.\n`);
  print(kind === 'points' ? pointsTable(entries as PointsAuditEntry[]) : vipTable(entries as VipAuditEntry[]));
}
