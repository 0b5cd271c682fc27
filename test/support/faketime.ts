// A service process whose clock is off by a given amount: Debian's libfaketime preloaded into it
// (the `faketime` package; .ci/run installs it). Everything the process reads of the wall clock
// moves; the other processes of a test keep the real time.
import { existsSync } from 'node:fs';
import { arch } from 'node:os';

const CANDIDATES = [
  `/usr/lib/${arch() === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu/faketime/libfaketimeMT.so.1`,
  '/usr/lib/faketime/libfaketimeMT.so.1',
  '/usr/local/lib/faketime/libfaketimeMT.so.1',
];

/** The library's path, or undefined when it is not installed. */
export const libfaketime = CANDIDATES.find((path) => existsSync(path));

/** Why the tests that need it are skipped here, when they are. */
export const libfaketimeMissing = libfaketime ? undefined : 'libfaketime is not installed (apt-get install faketime)';

/** The environment that moves a process's clock by `offset` (libfaketime's syntax: "+25h", "-15m", "+60s"). */
export function skewedClock(offset: string): Record<string, string> {
  if (!libfaketime) throw new Error(libfaketimeMissing);
  return { LD_PRELOAD: libfaketime, FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' };
}
