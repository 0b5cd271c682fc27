// `npm run simulator`: the platform simulator on its own, seeded with the demo users.
//   SIM_PORT (default 8091), SIM_HOST (default 127.0.0.1), SIM_PUBLIC_URL (default: where it listens)
import { DEMO_USERS } from './demoUsers.js';
import { createSimulator, SIMULATOR_KEY } from './simulator.js';

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
