// A service clock a test moves forward, for what happens once time has passed (a key expires, a
// session ends) without waiting for it.
import type { Clock } from '../../src/system/clock.js';

export function movableClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset).toISOString(),
    advance(ms) {
      offset += ms;
    },
  };
}
