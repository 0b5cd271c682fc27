// `npm run simulator`: the platform simulator on its own, seeded with the demo users, with its
// fault control at /_faults (loopback clients only).
//   SIM_PORT (default 8091), SIM_HOST (default 127.0.0.1), SIM_PUBLIC_URL (default: where it listens)
import { ConfigError } from '../config.js';
import { loadSimulatorPort, portProblem } from '../devPorts.js';
import { DEMO_USERS } from './demoUsers.js';
import { createSimulator, FAULT_CONTROL_PATH, SIMULATOR_KEY, type RunningSimulator } from './simulator.js';

let port: number;
try {
  port = loadSimulatorPort();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}
const host = process.env.SIM_HOST || '127.0.0.1';
const publicUrl = process.env.SIM_PUBLIC_URL;

const simulator = createSimulator({ users: DEMO_USERS, faultControl: true, ...(publicUrl && { publicUrl }) });
let running: RunningSimulator;
try {
  running = await simulator.listen(port, host);
} catch (error) {
  const problem = portProblem(error, port, 'SIM_PORT');
  if (!problem) throw error;
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}

console.log(`community platform simulator on ${publicUrl ?? running.url}`);
console.log(`  gold-finger key (all types): ${SIMULATOR_KEY}`);
console.log(`  users: ${DEMO_USERS.map((u) => `${u.userName} (${u.oId})`).join(', ')}`);
console.log(`  faults: ${running.url}${FAULT_CONTROL_PATH} (README, "Trying it in dev")`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void running.close().then(() => process.exit(0)));
}
