// One process of appenders for pg-store-append: APPENDERS concurrent loops, each appending one
// event at a time to a stream of its own, fenced as a keyed request's write is (the append
// carries a claim stream at its revision, with no events: src/services/commandHandler.ts), for
// SECONDS once every process has said READY and the runner says go (an IPC message).
// Prints `RESULT {"appends","seconds"}`.
import { PostgresEventStore } from '../src/store/postgres.js';

const { connectionString, appenders, seconds } = JSON.parse(process.argv[2]!) as { connectionString: string; appenders: number; seconds: number };
const store = await PostgresEventStore.open({ connectionString });
const data = { userId: 'u00000000000001', quality: 'vip', expired: '2030-01-01T00:00:00.000Z', at: '2026-01-01T00:00:00.000Z' };
const claims = await Promise.all(
  Array.from({ length: appenders }, async (_, k) => {
    const claim = `bench-claim-${process.pid}-${k}`;
    await store.append(claim, [{ type: 'IdempotentRequestStarted', data: { k } }], { expectedRevision: 'no_stream' });
    return claim;
  }),
);
process.stdout.write('READY {}\n');
await new Promise((resolve) => process.once('message', resolve));

let appends = 0;
const started = performance.now();
const end = started + seconds * 1000;
await Promise.all(
  claims.map(async (claim, k) => {
    const stream = `bench-vip-${process.pid}-${k}`;
    for (let revision = -1; performance.now() < end; revision++) {
      await store.append(stream, [{ type: 'VipRenewed', data }], {
        expectedRevision: revision < 0 ? 'no_stream' : revision,
        alongside: { streamName: claim, expectedRevision: 0, events: [] },
      });
      appends++;
    }
  }),
);
const elapsed = (performance.now() - started) / 1000;
await store.close();
process.disconnect?.();
process.stdout.write(`RESULT ${JSON.stringify({ appends, seconds: elapsed })}\n`);
