// What pg-store-append appends, and its floor: the same rows inserted by pgbench (PostgreSQL's own
// C client) as one-row INSERT transactions, with nothing of the adapter's design in them.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { postgresBinaries } from '../../test/support/postgres.js';
import type { EventToAppend } from '../../src/store/port.js';

/** The name the floor goes by in the bench's output. */
export const INSERT_FLOOR = 'one-row INSERT transactions on the same table and indexes at 64 clients, without lock or NOTIFY, synchronous_commit = on';

/** A VIP renewal as a keyed request appends it (data and metadata of the service's sizes). */
export function benchEvent(owner: string, n: number): Required<EventToAppend> {
  return {
    type: 'VipRenewed',
    data: {
      recordId: `r${String(n).padStart(14, '0')}`,
      userId: `u-${owner}`.padEnd(16, '0'),
      quality: 'vip',
      expired: '2030-01-01T00:00:00.000Z',
      previousExpired: '2029-01-01T00:00:00.000Z',
      at: '2026-01-01T00:00:00.000Z',
      appId: 'bench',
      keyId: 'k0000000000000000',
    },
    metadata: { correlationId: '00000000-0000-4000-8000-000000000000', app: 'bench', keyId: 'k0000000000000000' },
  };
}

export interface FloorResult {
  tps: number;
  transactions: number;
  failed: number;
  latencyAverageMs: number;
}

const sqlText = (value: unknown) => `'${JSON.stringify(value).replaceAll("'", "''")}'`;

/**
 * Runs pgbench against `connectionString` (the adapter's schema already there): `clients`
 * connections, each committing one-row INSERTs in autocommit into events for `seconds`, one stream
 * per client, its revisions rising, the position from the sequence, synchronous_commit on.
 */
export async function insertFloor(connectionString: string, { clients, seconds, dir }: { clients: number; seconds: number; dir: string }): Promise<FloorResult> {
  const binaries = postgresBinaries();
  if ('missing' in binaries) throw new Error(binaries.missing);
  const event = benchEvent('floor', 0);
  const script = join(dir, 'insert-floor.sql');
  writeFileSync(
    script,
    `INSERT INTO events (position, stream, revision, type, data, metadata, created) VALUES (nextval('events_seq'), 'floor-' || CAST(:client_id AS text), currval('events_seq'), '${event.type}', ${sqlText(event.data)}, ${sqlText(event.metadata)}, clock_timestamp());\n`,
  );
  const args = ['-n', '-M', 'prepared', '-c', String(clients), '-j', '2', '-T', String(seconds), '-f', script, connectionString];
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(join(binaries.dir, 'pgbench'), args, { env: { ...process.env, PGOPTIONS: '-c synchronous_commit=on' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`pgbench failed (${code}): ${text.trim().split('\n').slice(-5).join(' | ')}`))));
  });
  const number = (pattern: RegExp) => {
    const found = pattern.exec(output)?.[1];
    if (found === undefined) throw new Error(`pgbench printed no ${pattern.source}: ${output}`);
    return Number(found);
  };
  return {
    tps: number(/^tps = ([\d.]+)/m),
    transactions: number(/^number of transactions actually processed: (\d+)/m),
    failed: /^number of failed transactions: (\d+)/m.test(output) ? number(/^number of failed transactions: (\d+)/m) : 0,
    latencyAverageMs: number(/^latency average = ([\d.]+) ms/m),
  };
}
