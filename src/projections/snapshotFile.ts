// One read-model snapshot on disk: a header saying what it stands for (the log position each read
// model had applied, and events of the log to recognise it by), then each read model's state as
// v8.serialize wrote it, the whole under a CRC-32 checksum (it finds damage: a file cut short, a
// flipped bit; the file is the node's own, private, so nobody forges one). Written to a temporary
// file and renamed over the last one, so a crash leaves the old snapshot or the new one, never
// half of one.
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { crc32 } from 'node:zlib';
import * as v from 'valibot';

/** The format's name and version: a file that does not start with it is not read. */
const MAGIC = Buffer.from('CBSNAP01');
const CHECKSUM_BYTES = 4;
const LENGTH_BYTES = 4;
const HEADER_AT = MAGIC.length + CHECKSUM_BYTES + LENGTH_BYTES;
/** Hashed and written this much at a time, the event loop turning in between. */
const CHUNK_BYTES = 8 * 1024 * 1024;
const DIR_MODE = 0o700;
/** Read models hold session ids and key hashes: only the service's user may read them. */
const FILE_MODE = 0o600;

const position = v.pipe(v.number(), v.integer(), v.minValue(0));

/** An event as the snapshot knows it, to find it again in the store. */
const EventMarkSchema = v.object({ position, streamName: v.string(), revision: v.pipe(v.number(), v.integer()), type: v.string(), created: v.string() });

const HeaderSchema = v.object({
  /** When it was taken, on the log's clock (ISO-8601). */
  taken: v.pipe(v.string(), v.isoTimestamp()),
  node: v.string(),
  /** The event at the greatest position a read model had applied, when the store still had it. */
  last: v.optional(EventMarkSchema),
  /** The newest event at or before every read model's position in a stream retention never deletes. */
  anchor: v.optional(EventMarkSchema),
  models: v.array(v.object({ name: v.string(), version: v.number(), position, bytes: v.pipe(v.number(), v.integer(), v.minValue(0)) })),
});

export type EventMark = v.InferOutput<typeof EventMarkSchema>;
export type SnapshotHeader = v.InferOutput<typeof HeaderSchema>;

/** The file is there but cannot be used as it is: cut short, altered, or of another format. */
export class DamagedSnapshotError extends Error {}

export interface SnapshotContent {
  header: SnapshotHeader;
  /** Each read model's serialised state, in the header's order. */
  states: Buffer[];
  bytes: number;
}

/** The checksum of `parts`, a chunk per turn of the event loop (a snapshot may be hundreds of MB). */
async function checksum(parts: readonly Uint8Array[]): Promise<Buffer> {
  let value = 0;
  for (const part of parts) {
    for (let at = 0; at < part.length; at += CHUNK_BYTES) {
      value = crc32(part.subarray(at, at + CHUNK_BYTES), value);
      await nextTurn();
    }
  }
  const bytes = Buffer.alloc(CHECKSUM_BYTES);
  bytes.writeUInt32BE(value);
  return bytes;
}

/** Writes the snapshot in place of the last one; answers its size in bytes. */
export async function writeSnapshotFile(file: string, header: SnapshotHeader, states: readonly Uint8Array[]): Promise<number> {
  await mkdir(dirname(file), { recursive: true, mode: DIR_MODE });
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(LENGTH_BYTES);
  length.writeUInt32BE(json.length);
  const parts = [length, json, ...states];
  const sum = await checksum(parts);
  // One per node: a write cut short by a stop is overwritten by the next, not left beside it.
  const temporary = `${file}.${header.node}.tmp`;
  const handle = await open(temporary, 'w', FILE_MODE);
  let bytes = 0;
  try {
    for (const part of [MAGIC, sum, ...parts]) {
      for (let at = 0; at < part.length; at += CHUNK_BYTES) {
        const chunk = part.subarray(at, at + CHUNK_BYTES);
        await handle.write(chunk);
        bytes += chunk.length;
      }
    }
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temporary, { force: true });
    throw error;
  }
  await handle.close();
  await rename(temporary, file);
  // The rename itself survives a crash once the directory is flushed.
  const dir = await open(dirname(file), 'r');
  await dir.sync().finally(() => dir.close());
  return bytes;
}

/** The snapshot, its checksum verified; undefined when there is none. */
export async function readSnapshotFile(file: string): Promise<SnapshotContent | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (bytes.length < HEADER_AT || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) throw new DamagedSnapshotError('not a snapshot of this format');
  const sum = await checksum([bytes.subarray(MAGIC.length + CHECKSUM_BYTES)]);
  if (!sum.equals(bytes.subarray(MAGIC.length, MAGIC.length + CHECKSUM_BYTES))) throw new DamagedSnapshotError('its checksum does not match its content');
  const headerEnd = HEADER_AT + bytes.readUInt32BE(MAGIC.length + CHECKSUM_BYTES);
  const parsed = v.safeParse(HeaderSchema, parseJson(bytes.subarray(HEADER_AT, headerEnd).toString()));
  if (!parsed.success) throw new DamagedSnapshotError(`its header is not one this version writes (${v.summarize(parsed.issues)})`);
  const header = parsed.output;
  const states: Buffer[] = [];
  let at = headerEnd;
  for (const model of header.models) {
    states.push(bytes.subarray(at, at + model.bytes));
    at += model.bytes;
  }
  if (at !== bytes.length) throw new DamagedSnapshotError('its length does not match its header');
  return { header, states, bytes: bytes.length };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
