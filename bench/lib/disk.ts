// What one durable commit costs on the disk under the bench's data directories: a write of the
// size a one-event SQLite commit puts in the WAL (three 4 KB pages), then fdatasync, in place in
// a file that does not grow (as the WAL is reused), the writes spaced out as a paced run's
// commits are (a virtual disk's flush is dearer after a pause than in a stream of them).
import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from './proc.js';

const COMMIT_BYTES = 3 * 4096;
const SLOTS = 4;

/** p50 and p99 in ms of `samples` durable writes, `gapMs` apart. */
export async function durableWriteLatency(dir: string, samples: number, gapMs: number): Promise<{ p50: number; p99: number }> {
  const file = join(dir, 'durable-write-probe');
  const fd = openSync(file, 'w+');
  const page = Buffer.alloc(COMMIT_BYTES, 1);
  try {
    for (let slot = 0; slot < SLOTS; slot++) writeSync(fd, page, 0, COMMIT_BYTES, slot * COMMIT_BYTES);
    fdatasyncSync(fd);
    const ms: number[] = [];
    for (let i = 0; i < samples; i++) {
      await sleep(gapMs);
      const started = performance.now();
      writeSync(fd, page, 0, COMMIT_BYTES, (i % SLOTS) * COMMIT_BYTES);
      fdatasyncSync(fd);
      ms.push(performance.now() - started);
    }
    ms.sort((a, b) => a - b);
    return { p50: ms[Math.floor(samples / 2)]!, p99: ms[Math.min(samples - 1, Math.floor(samples * 0.99))]! };
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
}
