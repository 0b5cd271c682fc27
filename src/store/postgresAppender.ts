// The PostgreSQL adapter's appends: group commit per node. Appends wait in this process (never
// on a pooled connection), and whatever has gathered while a batch was in flight goes in the next
// one: one statement (append_batch, postgresSchema.ts), one transaction, one WAL flush. Up to
// BATCHES_IN_FLIGHT batches are in flight at once, on connections of their own, so one batch is
// judged and written while another waits for its flush; they never share a stream, and an
// append waits behind an earlier one to the same stream. Another batch goes while one is in
// flight only once at least as many appends wait as that one holds: each statement costs the
// server a fixed share of CPU, and splitting a light load into small batches would spend it for
// nothing (the appends would wait one statement at most either way). For the same reason batches
// are formed once per turn of the event loop, never inside one: the callers a batch answers
// append again in the continuations it runs, and a batch sent at the first of them would carry
// one append and leave the rest to the next. A large gathering, though, is split across the free
// connections in parts of MIN_SPLIT_APPENDS or more: the server runs a statement on one core, so
// the parts run side by side, and one's flush overlaps the other's work.
// Nothing is held in the database across a round trip: the statement takes the append lock and
// commits on the server, so a node frozen or cut off mid-append costs the others nothing but the
// statement they were already behind.
//
// Each append is judged alone inside the batch: a revision that does not match refuses that
// append (ConcurrencyError) and the others go in. A batch the server refuses for its data (a
// value it cannot store, a unique violation) is sent again one append at a time, so only the
// culprit fails.
import type pg from 'pg';
import { ConcurrencyError } from '../domain/errors.js';
import type { AppendResult, ExpectedRevision } from './port.js';

/** One event's row, its JSON serialised. */
export interface NewRow {
  type: string;
  data: string;
  metadata: string | null;
}

export interface AppendRequest {
  stream: string;
  expected: ExpectedRevision;
  rows: NewRow[];
  side?: { stream: string; expected: number | 'no_stream'; rows: NewRow[] };
  bytes: number;
}

interface Waiting {
  request: AppendRequest;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

/** Batches sent at once, each on its own connection (the appender's pool holds this many). */
export const BATCHES_IN_FLIGHT = 2;
/** Appends per statement at most. */
const MAX_BATCH_APPENDS = 256;
/** JSON bytes per statement at most (an append larger than this goes alone). */
const MAX_BATCH_BYTES = 8 * 1024 * 1024;
/** A gathering is split only into parts at least this large: smaller, their statements' fixed cost would eat what running side by side gains. */
export const MIN_SPLIT_APPENDS = 32;

const STATEMENT = 'SELECT * FROM append_batch($1::text[], $2::int[], $3::text[], $4::int[], $5::int[], $6::int[], $7::text[], $8::json[], $9::json[])';

interface ResultRow {
  outcome: 'ok' | 'conflict';
  conflict_stream: string | null;
  actual_revision: number | null;
  last_position: number | null;
  next_revision: number | null;
  side_revision: number | null;
}

const ANY = -2;
const NO_STREAM = -1;
const revisionCode = (expected: ExpectedRevision) => (expected === 'any' ? ANY : expected === 'no_stream' ? NO_STREAM : expected);

/** SQLSTATE classes that say something about one append's data rather than the server or the connection. */
const DATA_CLASSES = ['22', '23', '54'];
const codeOf = (error: unknown) => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : '';
};
const isDataError = (error: unknown) => DATA_CLASSES.includes(codeOf(error).slice(0, 2));
/**
 * A row for one of the append's (stream, revision) committed while the append was judged: only a
 * writer outside append_batch can do that (its stream locks make batches wait for each other).
 * Sent again, the append is judged on that row: a conflict (409) or, expecting any revision, a
 * success. This many times at most, then it fails as the store's own error.
 */
const UNIQUE_VIOLATION = '23505';
const UNIQUE_RETRIES = 3;

export class PostgresAppender {
  private waiting: Waiting[] = [];
  /** The number of appends in each batch in flight. */
  private readonly inFlight = new Set<{ size: number }>();
  /** The streams of the batches in flight. */
  private readonly busy = new Set<string>();
  /** next() is due at this turn's end (setImmediate). */
  private due = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly hooks: {
      /** A batch committed (wake subscribers, notify other nodes). */
      committed(): void;
      /** A batch failed whole (nothing of it was written): the error its appends are rejected with, as the store tells it. */
      failed(error: unknown): Error;
    },
  ) {}

  /** A batch is in flight: its commit, or its failure, follows. */
  get appending(): boolean {
    return this.inFlight.size > 0;
  }

  append(request: AppendRequest): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      this.nextAtTurnEnd();
    });
  }

  /** next() once the appends this turn of the event loop makes have joined the queue (see above). */
  private nextAtTurnEnd(): void {
    if (this.due) return;
    this.due = true;
    setImmediate(() => {
      this.due = false;
      this.next();
    });
  }

  /** Sends what is waiting while fewer than BATCHES_IN_FLIGHT are in flight (see above); each answered batch sends again. */
  private next(): void {
    while (this.inFlight.size < BATCHES_IN_FLIGHT && this.waiting.length >= Math.max(1, ...[...this.inFlight].map((b) => b.size))) {
      const parts = Math.max(1, Math.min(BATCHES_IN_FLIGHT - this.inFlight.size, Math.floor(this.waiting.length / MIN_SPLIT_APPENDS)));
      const batch = this.take(Math.ceil(this.waiting.length / parts));
      if (batch.length === 0) return;
      const entry = { size: batch.length };
      this.inFlight.add(entry);
      const streams = batch.flatMap(({ request }) => streamsOf(request));
      for (const stream of streams) this.busy.add(stream);
      void this.send(batch).finally(() => {
        this.inFlight.delete(entry);
        for (const stream of streams) this.busy.delete(stream);
        this.nextAtTurnEnd();
      });
    }
  }

  /**
   * The waiting appends, in order, up to the bounds (and `most` appends), that name no stream of a
   * batch in flight, of this batch (append_batch reads each stream's revision once per batch) or of
   * an append left waiting before them (appends to one stream go in the order they came).
   */
  private take(most: number): Waiting[] {
    const limit = Math.min(most, MAX_BATCH_APPENDS);
    const taken: Waiting[] = [];
    const left: Waiting[] = [];
    const blocked = new Set(this.busy);
    let bytes = 0;
    for (const [k, waiting] of this.waiting.entries()) {
      if (taken.length === limit) {
        left.push(...this.waiting.slice(k));
        break;
      }
      const streams = streamsOf(waiting.request);
      const fits = taken.length === 0 || bytes + waiting.request.bytes <= MAX_BATCH_BYTES;
      if (fits && !streams.some((stream) => blocked.has(stream))) {
        taken.push(waiting);
        bytes += waiting.request.bytes;
      } else {
        left.push(waiting);
      }
      for (const stream of streams) blocked.add(stream);
    }
    this.waiting = left;
    return taken;
  }

  private async send(batch: Waiting[], retries = UNIQUE_RETRIES): Promise<void> {
    let rows: ResultRow[];
    try {
      rows = await this.run(batch.map((w) => w.request));
    } catch (error) {
      // The statement failed whole (nothing of the batch was written): each append is sent again
      // alone, once, so only the culprit fails.
      if (batch.length > 1 && isDataError(error)) {
        for (const one of batch) await this.send([one]);
        return;
      }
      if (batch.length === 1 && codeOf(error) === UNIQUE_VIOLATION && retries > 0) return this.send(batch, retries - 1);
      const failure = this.hooks.failed(error);
      for (const waiting of batch) waiting.reject(failure);
      return;
    }
    this.hooks.committed();
    for (const [k, waiting] of batch.entries()) settle(waiting, rows[k]!);
  }

  private async run(requests: AppendRequest[]): Promise<ResultRow[]> {
    const rows = requests.flatMap((r) => [...r.rows, ...(r.side?.rows ?? [])]);
    const { rows: results } = await this.pool.query<ResultRow>({
      name: 'append_batch',
      text: STATEMENT,
      values: [
        requests.map((r) => r.stream),
        requests.map((r) => revisionCode(r.expected)),
        requests.map((r) => r.side?.stream ?? null),
        requests.map((r) => (r.side ? revisionCode(r.side.expected) : null)),
        requests.map((r) => r.rows.length),
        requests.map((r) => r.side?.rows.length ?? 0),
        rows.map((row) => row.type),
        rows.map((row) => row.data),
        rows.map((row) => row.metadata),
      ],
    });
    return results;
  }
}

const streamsOf = ({ stream, side }: AppendRequest) => (side ? [stream, side.stream] : [stream]);

function settle({ request, resolve, reject }: Waiting, row: ResultRow): void {
  if (row.outcome === 'conflict') {
    const actual = row.actual_revision === -1 ? 'no_stream' : row.actual_revision!;
    // append_batch names the stream that did not match; `any` never fails to match.
    const expected = row.conflict_stream === request.side?.stream ? request.side.expected : (request.expected as number | 'no_stream');
    reject(new ConcurrencyError(row.conflict_stream!, expected, actual));
    return;
  }
  resolve({
    nextExpectedRevision: row.next_revision!,
    position: row.last_position!,
    ...(request.side && { alongsideRevision: row.side_revision! }),
  });
}
