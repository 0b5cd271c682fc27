// Identifiers and secrets from the operating system's CSPRNG.
import { randomFillSync } from 'node:crypto';

/**
 * CSPRNG bytes, drawn from a pool that is refilled 8 KiB at a time: a `randomBytes()` call per id
 * would be a measurable part of a connect (bench/HISTORY.md). The bytes are the same kind, each handed
 * out once (Node's own randomUUID() keeps a pool the same way).
 */
const POOL_SIZE = 8192;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let poolOffset = POOL_SIZE;

export function secureRandomBytes(size: number): Buffer {
  if (size > POOL_SIZE) return randomFillSync(Buffer.allocUnsafe(size));
  if (poolOffset + size > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = Buffer.from(pool.subarray(poolOffset, poolOffset + size));
  // Never hand the same bytes out twice.
  pool.fill(0, poolOffset, poolOffset + size);
  poolOffset += size;
  return bytes;
}

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A 15-character [a-z0-9] id from a CSPRNG: the same shape as the record ids of the
 * PocketBase-based service this one replaces, so clients that stored those keep working.
 */
export function newRecordId(): string {
  const bytes = secureRandomBytes(15);
  let id = '';
  // 252 = 7 × 36: rejecting larger bytes keeps every character equally likely.
  for (let i = 0; i < bytes.length; i++) {
    let b = bytes[i]!;
    while (b >= 252) b = secureRandomBytes(1)[0]!;
    id += ID_ALPHABET[b % 36];
  }
  return id;
}
