// Makes a log that went backwards between two runs loud. A small file beside the database (not in
// it: what loses the database's tail, a deleted -wal file or an older copy put back, leaves it
// alone) holds the highest position this store saw committed. At open, a database whose head is
// below it is refused, unless the operator accepts the loss.
//
// The file is replaced whole (written to a temporary file, fsynced, renamed, the directory
// fsynced), so it always holds a position that was committed. It is written at open, at most once
// per interval after appends (off the appends' path: an append only raises a number), and at a
// clean close; a crash leaves it behind the log, never ahead of it.
import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/** The log's head is below what the marker recorded, or the marker is unreadable. */
export class LogLossError extends Error {
  override readonly name = 'LogLossError';
}

export interface LogMarkerOptions {
  /** The marker file. */
  file: string;
  /** Opens a log below the marker all the same (with a warning) and moves the marker down to it. */
  acceptLogLoss?: boolean;
  /** Told of an accepted loss, and of the first marker write that failed. */
  warn?: (message: string) => void;
  /** At least this long between two writes after appends; 1000 ms unless set. */
  intervalMs?: number;
}

const FILE_MODE = 0o600;

function temporaryName(file: string): string {
  return `${file}.${process.pid}-${randomUUID().slice(0, 8)}.tmp`;
}

const content = (position: number) => `${position}\n`;

/** Some file systems cannot fsync a directory; the rename is then as durable as they make it. */
function syncDirectory(path: string): void {
  try {
    const fd = openSync(path, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Nothing more to do for durability here.
  }
}

function writeNow(file: string, position: number): void {
  const temporary = temporaryName(file);
  try {
    const fd = openSync(temporary, 'w', FILE_MODE);
    try {
      writeSync(fd, content(position));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  syncDirectory(dirname(file));
}

async function writeLater(file: string, position: number): Promise<void> {
  const temporary = temporaryName(file);
  try {
    const handle = await open(temporary, 'w', FILE_MODE);
    try {
      await handle.writeFile(content(position));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  try {
    const directory = await open(dirname(file), 'r');
    await directory.sync().finally(() => directory.close());
  } catch {
    // As in syncDirectory.
  }
}

/** The position the marker holds, undefined when there is none; throws when it holds no position. */
export function readMarker(file: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (!/^\d{1,15}\n?$/.test(text)) throw new LogLossError(`${file} does not hold a log position (it holds ${JSON.stringify(text.slice(0, 40))})`);
  return Number(text.trim());
}

export class LogMarker {
  private high: number;
  private written: number;
  private lastWriteAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private warnedOfFailure = false;
  private closed = false;
  private readonly intervalMs: number;

  /**
   * Checks the head of the database against the marker and brings the marker up to it. Throws
   * LogLossError (one line naming both positions and the files) when the head is below it.
   */
  static open(options: LogMarkerOptions & { database: string }, head: number): LogMarker {
    const { file, database } = options;
    const accept = ' Put the missing events back, or start with --accept-log-loss to go on without them.';
    let recorded: number | undefined;
    try {
      recorded = readMarker(file);
    } catch (error) {
      if (!(error instanceof LogLossError) || !options.acceptLogLoss) {
        throw new LogLossError(`${(error as Error).message}: cannot tell whether the event log in ${database} lost events.${accept}`);
      }
      options.warn?.(`${error.message}; accepted: ${file} now records position ${head}, the head of ${database}`);
      recorded = undefined; // rewritten below
    }
    if (recorded !== undefined && head < recorded) {
      if (!options.acceptLogLoss) {
        throw new LogLossError(
          `The event log in ${database} ends at position ${head}, below position ${recorded} recorded in ${file}: committed events are missing (a lost -wal file, or an older copy of the database).${accept}`,
        );
      }
      options.warn?.(`Accepted the loss of the events after position ${head} in ${database} (${file} recorded ${recorded}); ${file} now records ${head}`);
      recorded = undefined; // rewritten below
    }
    if (recorded !== head) writeNow(file, head);
    return new LogMarker(options, head);
  }

  private constructor(
    private readonly options: LogMarkerOptions,
    head: number,
  ) {
    this.high = head;
    this.written = head;
    this.lastWriteAt = Date.now(); // open() has just written it
    this.intervalMs = options.intervalMs ?? 1000;
  }

  /** A position committed: the marker is brought up to it within the interval. */
  saw(position: number): void {
    if (position <= this.high || this.closed) return;
    this.high = position;
    this.schedule();
  }

  /** Stops the periodic writes and records `head` (the database's, read at close) or higher. */
  async close(head: number): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    this.high = Math.max(this.high, head);
    if (this.high > this.written) await this.write();
  }

  private schedule(): void {
    if (this.timer || this.writing || this.closed) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.write();
      },
      Math.max(0, this.lastWriteAt + this.intervalMs - Date.now()),
    );
    this.timer.unref();
  }

  private write(): Promise<void> {
    const position = this.high;
    this.lastWriteAt = Date.now();
    const writing = writeLater(this.options.file, position).then(
      () => {
        this.written = Math.max(this.written, position);
      },
      (error: unknown) => {
        // The marker only falls behind: later writes try again, and the log itself is fine.
        if (this.warnedOfFailure) return;
        this.warnedOfFailure = true;
        this.options.warn?.(`Cannot update ${this.options.file}: ${(error as Error).message}`);
      },
    );
    this.writing = writing.finally(() => {
      this.writing = undefined;
      if (this.high > this.written) this.schedule();
    });
    return this.writing;
  }
}
