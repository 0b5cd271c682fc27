// Runs the platform simulator on its own, seeded with a few demo users (used by `npm run dev`).
//   SIM_PORT (default 8091), SIM_HOST (default 127.0.0.1), SIM_PUBLIC_URL (default: where it listens)
import { createSimulator, SIMULATOR_KEY, type SimulatorUserSeed } from './simulator.js';

const DEMO_USERS: SimulatorUserSeed[] = [
  { oId: '1630399136785', userName: 'alice', nickname: 'Alice', points: 1000, liveness: 80.2, items: { checkin1day: 1, patchCheckinCard: 2 } },
  { oId: '1630399136786', userName: 'bob', nickname: 'Bob', points: 250, liveness: 12.5, items: { metalTicket: 1 } },
  { oId: '1630399136787', userName: 'carol', nickname: 'Carol', points: 0, liveness: 0 },
  { oId: '1630399136788', userName: 'dave', nickname: 'Dave', points: 42, liveness: 50, items: { nameCard: 3 } },
];

const port = Number(process.env.SIM_PORT ?? 8091);
const host = process.env.SIM_HOST ?? '127.0.0.1';
const publicUrl = process.env.SIM_PUBLIC_URL;

const simulator = createSimulator({ users: DEMO_USERS, ...(publicUrl && { publicUrl }) });
const running = await simulator.listen(port, host);

console.log(`community platform simulator on ${publicUrl ?? running.url}`);
console.log(`  gold-finger key (all types): ${SIMULATOR_KEY}`);
console.log(`  users: ${DEMO_USERS.map((u) => `${u.userName} (${u.oId})`).join(', ')}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void running.close().then(() => process.exit(0)));
}
