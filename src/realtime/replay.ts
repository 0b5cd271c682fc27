// A reconnecting client's replay (Last-Event-ID), written as its connection takes it: frames go
// out until the response's buffer is over its high-water mark, then the replay waits for 'drain'.
// A backlog of any size within the replay window thus reaches a slow reader whole, and the server
// holds about one high-water mark and one frame of it at a time, never the whole backlog.
//
// Live messages that arrive meanwhile are held and follow the backlog in log order: one at or
// below the backlog's last position is dropped (the backlog carries it), one above is kept, and
// each is written only above what the client's machine sent (hub.ts). Held frames are live traffic
// the reader has not taken: past SLOW_READER_MAX_BYTES the reader is cut off, as it is live.
import type { RecentMessage } from '../projections/recentMessages.js';
import type { Frame } from './clientActor.js';
import { formatFrame, SLOW_READER_MAX_BYTES, type FrameStream } from './sse.js';

export type LiveFrame = Extract<Frame, { type: 'message' }>;

/** Frames written per event-loop turn while the socket takes them at once: other clients get turns. */
const FRAMES_PER_TURN = 100;

/** The connection a replay writes to. */
export interface ReplayTarget {
  /** The connection ended: the replay stops. */
  readonly closed: boolean;
  /** One message of the backlog, through the client's machine, which emits its frame. */
  replayMessage(message: RecentMessage): void;
  /** A held live frame, written unless the client's machine sent its id already. */
  release(frame: LiveFrame): void;
  /** Everything was written: live frames go straight to the stream from now on. */
  replayed(): void;
  /** Held live frames passed the bound: the reader is cut off. */
  cutOff(): void;
}

export class Replay {
  private next = 0;
  private readonly held: Array<{ frame: LiveFrame; bytes: number } | undefined> = [];
  private nextHeld = 0;
  private heldBytes = 0;
  private stopped = false;
  /** Position of the backlog's last message: a live frame at or below it is replayed from the backlog. */
  private readonly last: number;
  private readonly resume = () => this.pump();

  /**
   * `backlog`: the client's missed messages, oldest first. Without a stream (a sink that takes
   * every frame at once) nothing waits, and the replay is written in turns of FRAMES_PER_TURN.
   */
  constructor(
    private readonly backlog: readonly RecentMessage[],
    private readonly stream: FrameStream | undefined,
    private readonly target: ReplayTarget,
  ) {
    this.last = backlog.at(-1)?.position ?? 0;
  }

  start(): void {
    this.pump();
  }

  /** Nothing more is written (the connection signed in as someone else, or closed). */
  stop(): void {
    this.stopped = true;
    this.held.length = this.nextHeld = this.heldBytes = 0;
  }

  /** A live frame for the client, arriving while the replay runs. */
  hold(frame: LiveFrame): void {
    if (this.stopped || frame.id <= this.last) return;
    // The same frame object reaches every connection of the user: formatFrame serialises it once.
    const bytes = formatFrame(frame).length;
    this.held.push({ frame, bytes });
    this.heldBytes += bytes;
    if (this.heldBytes > SLOW_READER_MAX_BYTES) {
      this.stop();
      this.target.cutOff();
    }
  }

  private pump(): void {
    const { stream, target } = this;
    for (let written = 0; written < FRAMES_PER_TURN; written++) {
      if (this.stopped || target.closed || stream?.destroyed) return;
      if (stream?.writableNeedDrain) {
        stream.once('drain', this.resume);
        return;
      }
      if (this.next < this.backlog.length) {
        target.replayMessage(this.backlog[this.next++]!);
      } else if (this.nextHeld < this.held.length) {
        const { frame, bytes } = this.held[this.nextHeld]!;
        this.held[this.nextHeld++] = undefined;
        this.heldBytes -= bytes;
        if (this.nextHeld === this.held.length) this.held.length = this.nextHeld = 0;
        target.release(frame);
      } else {
        this.stop();
        target.replayed();
        return;
      }
    }
    setImmediate(this.resume);
  }
}
