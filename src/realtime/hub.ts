// The registry of this node's realtime clients (docs/architecture.md, Realtime). Each connection
// is one client's state machine (clientActor.ts), run in place, and each signed-in user with
// connections here one actor (userActor.ts) for the live messages of all of them; the hub
// feeds machines and actors from the store's subscription (runner.applied$) — pushes, sign-ins and logouts
// reach a connection whichever node accepted them — and from one shared heartbeat tick. Every
// frame the machines and actors emit reaches its connection's writer through the hub's one RxJS subject,
// `frames$`; a reconnect's replay is paced to its response (replay.ts), and live traffic a reader
// does not take cuts it off past SLOW_READER_MAX_BYTES.
import { Subject, type Observer, type Subscription } from 'rxjs';
import { createActor, type Actor, type AnyActorRef } from 'xstate';
import { clientDecider, type ClientCommand, type ClientState, type DisconnectClient, type SessionBinding } from '../domain/client.js';
import { streams, type ClientOpener } from '../domain/events.js';
import { exceedsDepth } from '../domain/jsonBounds.js';
import type { Logger } from '../log.js';
import { asDomain } from '../projections/recorded.js';
import { recipientsOf, type RecentMessage, type RecentMessagesReadModel } from '../projections/recentMessages.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { UserRecord, UsersReadModel } from '../projections/users.js';
import type { ClientsReadModel } from '../projections/clients.js';
import type { Clock } from '../system/clock.js';
import { secureRandomBytes } from '../system/ids.js';
import type { EventStore, RecordedEvent } from '../store/port.js';
import { handleCommand, type KnownState } from '../services/commandHandler.js';
import { ClientMachines, realtimeActorsLogic, type ClientActorEvent, type ClientInput, type ClientSnapshot, type FrameSink, type Frame } from './clientActor.js';
import type { PushedMessage } from './messages.js';
import { Replay, type LiveFrame, type ReplayTarget } from './replay.js';
import { SLOW_READER_MAX_BYTES, type FrameStream } from './sse.js';
import { isSpecUserOf, toSpecUser, type SpecUser } from './specUser.js';
import { userActorLogic, type UserActorLogic } from './userActor.js';
import { WorkContext } from '../system/workContext.js';

/** Deliveries of one push made per event-loop turn (the connections of whole users), and heartbeats. */
const DELIVERIES_PER_TURN = 100;

const HEARTBEAT: ClientActorEvent = { type: 'HEARTBEAT' };
const CLOSE: ClientActorEvent = { type: 'CLOSE' };
/**
 * Heartbeat passes per heartbeat interval. A pass sends the heartbeat to the streams that have
 * been silent for a whole interval (a stream that carried anything since needs none), so a stream
 * is never silent for longer than the interval, and an idle one gets one per interval.
 */
const PASSES_PER_HEARTBEAT = 4;

/** How long a connection waits for this node to reach a Last-Event-ID it has not applied yet. */
const LAST_EVENT_ID_WAIT_MS = 1000;

/** 24 CSPRNG bytes in base64url: 32 url-safe characters. */
export function newClientId(): string {
  return secureRandomBytes(24).toString('base64url');
}

export interface OpenRequest {
  /** The request that opens it: the connect it records is stamped with it. */
  work: WorkContext;
  /** The live session the request carried, and its user: the client starts signed in. */
  session?: { binding: SessionBinding; user: UserRecord };
  /** The browser's Last-Event-ID: with a session, the user's messages after it are replayed. */
  lastEventId?: number;
  /** Who opened it (the login page compares and shows it). */
  opener?: ClientOpener;
}

export interface ClientHandle {
  readonly clientId: string;
  /**
   * Hands the client's frames to the observer (each frame its machine's transitions send, then
   * complete when it reaches `closed`, or error when it failed), then starts the machine (PB_CONNECT first, then any replayed messages). Call
   * it in the same tick as open() resolved, so that no event applied in between is missed.
   * `stream`, the response the observer writes to, paces the replay and bounds what a reader
   * leaves untaken; without one the observer takes every frame at once, unbounded.
   */
  start(observer: Partial<Observer<Frame>>, stream?: FrameStream): void;
  /** The request closed: the machine reaches `closed`, the client is gone. Idempotent. */
  close(): void;
}

export class HubClosedError extends Error {
  constructor() {
    super('The realtime hub is shutting down');
  }
}

/** A frame on its way to a connection's writer. */
interface Delivery {
  readonly to: Connection;
  readonly frame: Frame;
}

/** What a connection asks of the hub that holds it. */
interface Lifecycle {
  start(connection: Connection, observer: Partial<Observer<Frame>>, stream: FrameStream | undefined): void;
  close(connection: Connection, reason: DisconnectClient['reason']): void;
  /** A step of the connection's machine threw. */
  failed(connection: Connection, error: unknown): void;
  /** The heartbeat pass under way (the hub counts it up from 0). */
  pass: number;
  /** Where the frames of every connection go: the hub's one subscription writes each to its stream. */
  readonly frames$: Subject<Delivery>;
  /** Where every client machine on this node takes its steps. */
  readonly machines: ClientMachines;
  /** The parent, and so the actor system, of every user actor on this node. */
  readonly actors: AnyActorRef;
}

/**
 * One client on this node, the handle the HTTP side holds for it, and its machine's `out`. A class
 * rather than closures: thousands live as long as their streams, and methods are shared.
 */
class Connection implements ClientHandle, ReplayTarget, FrameSink {
  started = false;
  closed = false;
  /** Where the machine's frames go, once started. */
  frames: Partial<Observer<Frame>> | undefined;
  /** The response under `frames`, when the HTTP side gave it. */
  stream: FrameStream | undefined;
  /** The Last-Event-ID replay under way: live frames wait behind it. */
  replaying: Replay | undefined;
  /** The heartbeat pass during which the stream last carried a frame. */
  lastPass = 0;
  /** The snapshot the client's machine reached, once started. */
  machine: ClientSnapshot | undefined;

  constructor(
    private readonly lifecycle: Lifecycle,
    readonly clientId: string,
    /** The machine's PB_CONNECT id and the session it starts with (ClientInput). */
    private readonly position: number,
    private readonly session: ClientInput['session'],
    public userId: string | undefined,
    public sessionId: string | undefined,
    readonly replayAfter: number | undefined,
    /** The client's stream as this node last saw it: its disconnect is decided on it. */
    public known: KnownState<ClientState>,
  ) {}

  /** The machine's first step: PB_CONNECT, and the sign-in of a client with a session. */
  begin(): void {
    const { clientId, position, session } = this;
    try {
      this.machine = this.lifecycle.machines.start({ clientId, position, session, out: this });
    } catch (error) {
      this.lifecycle.failed(this, error);
    }
  }

  /** One event through the client's machine, once it started. */
  step(event: ClientActorEvent): void {
    const { machine } = this;
    if (machine === undefined) return;
    try {
      this.machine = this.lifecycle.machines.step(machine, event);
    } catch (error) {
      this.lifecycle.failed(this, error);
    }
  }

  start(observer: Partial<Observer<Frame>>, stream?: FrameStream): void {
    this.lifecycle.start(this, observer, stream);
  }

  close(): void {
    this.lifecycle.close(this, 'closed');
  }

  /** The machine reached `closed`: its frames end. */
  end(): void {
    this.frames?.complete?.();
  }

  /** The machine failed: its frames end with the error. */
  failed(error: unknown): void {
    this.frames?.error?.(error);
  }

  /** A frame for the stream, through the hub's subject: the machine's own, or a live message from the user's actor. */
  send(frame: Frame): void {
    this.lifecycle.frames$.next({ to: this, frame });
  }

  /** Writes a frame the subject delivered. */
  write(frame: Frame): void {
    this.lastPass = this.lifecycle.pass;
    this.frames?.next?.(frame);
    // A replay paces its own writes; live traffic piles up for a reader that stopped.
    const { stream } = this;
    if (this.replaying === undefined && stream !== undefined && stream.writableLength > SLOW_READER_MAX_BYTES) stream.destroy();
  }

  /** A live message from the user's actor: held behind a replay, else written now. */
  live(frame: LiveFrame): void {
    if (this.replaying) this.replaying.hold(frame);
    else this.release(frame);
  }

  /** Written unless this client's own machine sent its id (replayed it, or a later login frame). */
  release(frame: LiveFrame): void {
    const { machine } = this;
    if (machine !== undefined && frame.id > machine.context.lastId) this.send(frame);
  }

  replayMessage({ position, appId, name, data }: RecentMessage): void {
    this.step({ type: 'MESSAGE', position, appId, name, data });
  }

  replayed(): void {
    this.replaying = undefined;
  }

  /** Destroyed, not ended: an end would wait for a reader that takes nothing. Its close closes the client. */
  cutOff(): void {
    this.replaying = undefined;
    if (this.stream) this.stream.destroy();
    else this.close();
  }

  /** Stops a replay under way (the client signed in as someone else). */
  endReplay(): void {
    this.replaying?.stop();
    this.replaying = undefined;
  }
}

/** A signed-in user's connections on this node, and the actor that emits their live messages. */
class UserChannel {
  readonly connections = new Set<Connection>();

  constructor(
    readonly actor: Actor<UserActorLogic>,
    /** The user as the frames show it, one object for all of the user's connections here while it stays the same. */
    public user: SpecUser | undefined,
  ) {
    actor.on('message', (frame) => {
      for (const connection of this.connections) connection.live(frame);
    });
    actor.start();
  }
}

export interface RealtimeHubDeps {
  store: EventStore;
  runner: ProjectionRunner;
  users: UsersReadModel;
  recentMessages: RecentMessagesReadModel;
  clock: Clock;
  log: Logger;
  heartbeatMs: number;
  clients: ClientsReadModel;
  /** This node's id (NODE_ID): recorded with each client it holds. */
  nodeId: string;
  /**
   * Messages whose data nests deeper are not delivered (pushes this version accepts never do):
   * one stored by an older version could not be formatted, and a browser reconnecting with
   * Last-Event-ID would have it replayed again and again.
   */
  maxDataDepth: number;
}

export class RealtimeHub {
  private readonly connections = new Map<string, Connection>();
  private readonly byUser = new Map<string, UserChannel>();
  private readonly bySession = new Map<string, Set<Connection>>();
  /**
   * Appends in flight (connects and disconnects): stop() waits for them before the store closes.
   * Counted rather than kept in a Set: a Set churned by every connect leaves rehashed tables that
   * keep what they held alive (src/http/draining.ts).
   */
  private pending = 0;
  private readonly settledWaiters: Array<() => void> = [];
  private subscription: Subscription | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private stopping = false;
  /** A push is being delivered over several turns; `held` are the events applied after it. */
  private delivering = false;
  private readonly held: RecordedEvent[] = [];
  private readonly lifecycle: Lifecycle = {
    start: (connection, observer, stream) => this.startConnection(connection, observer, stream),
    close: (connection, reason) => this.close(connection, reason),
    failed: (connection, error) => this.failed(connection, error),
    pass: 0,
    frames$: new Subject<Delivery>(),
    machines: new ClientMachines(),
    actors: createActor(realtimeActorsLogic((actorId, error) => this.deps.log.error({ err: error, actorId }, 'a realtime user actor failed'))).start(),
  };

  /**
   * What the node records of its own accord: disconnects (a stream's end, a restart's orphans,
   * shutdown) are the node's work, not the request's that opened the stream.
   */
  private readonly work: WorkContext;

  constructor(private readonly deps: RealtimeHubDeps) {
    this.work = WorkContext.ofNode(deps.nodeId);
    // Synchronous, in the order the machines and actors emit: a frame is written before the next event is taken.
    this.lifecycle.frames$.subscribe(({ to, frame }) => to.write(frame));
  }

  /** Number of open connections on this node. */
  get size(): number {
    return this.connections.size;
  }

  /**
   * Clients still connected on this node at start were held by an earlier run of it that died
   * without recording their disconnects: record them now, so that `/adm/user/get` answers 404
   * for them rather than a stale user. Call before accepting connections.
   */
  async closeOrphans(): Promise<number> {
    const { clients, nodeId, store, runner, clock } = this.deps;
    const orphans = [...clients.all()].filter((client) => client.node === nodeId).map((client) => client.clientId);
    const handled = await Promise.all(
      orphans.map((clientId) =>
        handleCommand(this.work, store, streams.client(clientId), clientDecider, { type: 'DisconnectClient', clientId, reason: 'restart', at: clock.now() }),
      ),
    );
    const last = Math.max(0, ...handled.map((h) => h.position ?? 0));
    if (last > 0) await runner.waitFor(last);
    return orphans.length;
  }

  start(): void {
    this.subscription = this.deps.runner.applied$.subscribe({
      next: (event) => this.route(event),
      error: (error: unknown) => this.deps.log.error({ err: error }, 'realtime hub lost the store subscription'),
    });
    // One timer for every connection: a heartbeat is an event each actor turns into a frame.
    this.heartbeat = setInterval(() => this.heartbeatPass(), this.deps.heartbeatMs / PASSES_PER_HEARTBEAT);
    this.heartbeat.unref();
  }

  /** Records the new client in the store, then hands back the connection to start. */
  async open(request: OpenRequest): Promise<ClientHandle> {
    if (this.stopping) throw new HubClosedError();
    const { runner, clock } = this.deps;
    const { session } = request;
    let { lastEventId } = request;
    if (lastEventId !== undefined && lastEventId > runner.position) {
      // Ahead of this node: another node served it and this one lags a moment behind — or the
      // id is not a position of this log at all (forged, or from a store since replaced).
      try {
        await runner.waitFor(lastEventId, LAST_EVENT_ID_WAIT_MS);
      } catch {
        lastEventId = undefined;
      }
      if (this.stopping) throw new HubClosedError();
    }
    const clientId = newClientId();
    const connect: ClientCommand = { type: 'ConnectClient', clientId, node: this.deps.nodeId, session: request.session?.binding, at: clock.now(), ...request.opener };
    // Durable before the browser learns its id: a login page served by any node finds it.
    const { state, revision } = await this.track(this.handle(request.work, clientId, connect, { state: clientDecider.initialState(), revision: -1 }));

    const replayAfter = session && lastEventId !== undefined ? lastEventId : undefined;
    // Events up to runner.position reached the read models (and the replay window) already;
    // later ones come live. A replaying client's PB_CONNECT repeats its own Last-Event-ID.
    const position = replayAfter ?? runner.position;
    const startsWith = session && { user: this.specUserOf(session.user), sessionId: session.binding.sessionId };
    const connection = new Connection(this.lifecycle, clientId, position, startsWith, session?.binding.userId, session?.binding.sessionId, replayAfter, { state, revision });
    if (this.stopping) {
      this.close(connection, 'shutdown');
      throw new HubClosedError();
    }
    return connection;
  }

  /** Ends every stream cleanly and waits for the disconnects to be recorded. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.heartbeat);
    this.subscription?.unsubscribe();
    for (const connection of [...this.connections.values()]) this.close(connection, 'shutdown');
    while (this.pending > 0) await new Promise<void>((settled) => this.settledWaiters.push(settled));
    this.lifecycle.frames$.complete();
    this.lifecycle.actors.stop();
  }

  private startConnection(connection: Connection, observer: Partial<Observer<Frame>>, stream: FrameStream | undefined): void {
    if (connection.started || connection.closed) return;
    connection.started = true;
    connection.frames = observer;
    connection.stream = stream;
    connection.lastPass = this.lifecycle.pass;
    connection.begin();
    if (connection.closed) return; // its first step failed
    this.connections.set(connection.clientId, connection);
    this.index(connection);
    if (connection.replayAfter !== undefined && connection.userId !== undefined) {
      // What the read models hold now; what the hub routes from here on comes live, behind it.
      const backlog = this.deps.recentMessages.forUserAfter(connection.userId, connection.replayAfter).filter((m) => this.deliverable(m.position, m.data));
      if (backlog.length > 0) {
        connection.replaying = new Replay(backlog, stream, connection);
        connection.replaying.start();
      }
    }
  }

  /** A step of a client's machine threw (an action failed): its stream ends with the error, the client closes. */
  private failed(connection: Connection, error: unknown): void {
    if (connection.closed) return;
    this.deps.log.error({ err: error, clientId: connection.clientId }, 'a realtime client machine failed; closing its connection');
    connection.failed(error);
    this.close(connection, 'closed');
  }

  private close(connection: Connection, reason: DisconnectClient['reason']): void {
    if (connection.closed) return;
    connection.closed = true;
    this.unindex(connection);
    this.connections.delete(connection.clientId);
    // Not started: nobody has its frames yet, and its machine never ran.
    connection.step(CLOSE);
    const { clientId } = connection;
    this.track(this.handle(this.work, clientId, { type: 'DisconnectClient', clientId, reason, at: this.deps.clock.now() }, connection.known)).catch((error: unknown) =>
      this.deps.log.error({ err: error, clientId }, 'could not record a client disconnect'),
    );
  }

  private route(recorded: RecordedEvent): void {
    // Behind a push still being delivered, in order: no connection may see a later event first.
    if (this.delivering) this.held.push(recorded);
    else this.apply(recorded);
  }

  /**
   * Sends a message to its users, a slice per event-loop turn: Node sends what a turn wrote once
   * the turn ends, so the first frames of a large push leave while the rest are made.
   */
  private deliver(message: PushedMessage, targets: UserChannel[], from: number): void {
    let next = from;
    for (let written = 0; next < targets.length && written < DELIVERIES_PER_TURN; next++) {
      const { actor, connections } = targets[next]!;
      actor.send(message);
      written += connections.size;
    }
    this.delivering = next < targets.length;
    if (this.delivering) {
      setImmediate(() => this.deliver(message, targets, next));
      return;
    }
    while (!this.delivering && this.held.length > 0) this.apply(this.held.shift()!);
  }

  /** The streams silent for a whole heartbeat interval get a heartbeat. */
  private heartbeatPass(): void {
    const pass = ++this.lifecycle.pass;
    const quiet: Connection[] = [];
    for (const connection of this.connections.values()) if (pass - connection.lastPass >= PASSES_PER_HEARTBEAT) quiet.push(connection);
    if (quiet.length > 0) this.beat(quiet, 0);
  }

  /** Heartbeats, a slice per turn like a push: a push meanwhile does not wait for all of them. */
  private beat(targets: Connection[], from: number): void {
    const end = Math.min(targets.length, from + DELIVERIES_PER_TURN);
    for (let i = from; i < end; i++) targets[i]!.step(HEARTBEAT);
    if (end < targets.length) setImmediate(() => this.beat(targets, end));
  }

  private apply(recorded: RecordedEvent): void {
    const event = asDomain(recorded);
    switch (event.type) {
      case 'MessagePushed': {
        const { appId, name, data } = event.data;
        if (!this.deliverable(recorded.position, data)) break;
        // One event for every user it reaches: actors only read it.
        const message: PushedMessage = { type: 'MESSAGE', position: recorded.position, appId, name, data };
        const targets: UserChannel[] = [];
        for (const userId of recipientsOf(event.data, this.deps.users)) {
          const channel = this.byUser.get(userId);
          if (channel) targets.push(channel);
        }
        this.deliver(message, targets, 0);
        break;
      }
      case 'ClientSignedIn': {
        const connection = this.connections.get(event.data.clientId);
        if (!connection) return; // held by another node, or gone
        connection.known = { state: clientDecider.evolve(connection.known.state, event), revision: recorded.revision };
        const user = this.deps.users.byUserId(event.data.userId);
        if (!user) {
          this.deps.log.warn({ clientId: connection.clientId, userId: event.data.userId }, 'sign-in for a user the read model does not know');
          return;
        }
        // The rest of a replay is older than this sign-in, and another user's live messages are not this one's.
        connection.endReplay();
        this.unindex(connection);
        connection.userId = event.data.userId;
        connection.sessionId = event.data.sessionId;
        this.index(connection);
        connection.step({ type: 'SIGNED_IN', user: this.specUserOf(user), sessionId: event.data.sessionId, position: recorded.position });
        break;
      }
      case 'SessionEnded': {
        // Logged out (on any node): its connections close; the browser reconnects signed out.
        const connections = this.bySession.get(event.data.sessionId);
        if (connections) for (const connection of [...connections]) this.close(connection, 'logout');
        break;
      }
      default:
        break;
    }
  }

  private deliverable(position: number, data: unknown): boolean {
    if (!exceedsDepth(data, this.deps.maxDataDepth)) return true;
    this.deps.log.warn({ position, maxDepth: this.deps.maxDataDepth }, 'a stored message nests deeper than pushes may: not delivered');
    return false;
  }

  /** The user's object for a connection's frames: the one the user's other connections here hold, while it is the same. */
  private specUserOf(record: UserRecord): SpecUser {
    const channel = this.byUser.get(record.id);
    if (channel?.user && isSpecUserOf(channel.user, record)) return channel.user;
    const user = toSpecUser(record);
    if (channel) channel.user = user;
    return user;
  }

  private index(connection: Connection): void {
    const { userId } = connection;
    if (userId !== undefined) {
      let channel = this.byUser.get(userId);
      if (!channel) {
        // The user as this connection's machine holds it, for the next connections to share.
        const user = connection.machine?.context.user;
        channel = new UserChannel(createActor(userActorLogic, { parent: this.lifecycle.actors }), user?.id === userId ? user : undefined);
        this.byUser.set(userId, channel);
      }
      channel.connections.add(connection);
    }
    if (connection.sessionId !== undefined) addTo(this.bySession, connection.sessionId, connection);
  }

  private unindex(connection: Connection): void {
    const { userId } = connection;
    const channel = userId === undefined ? undefined : this.byUser.get(userId);
    if (channel?.connections.delete(connection) && channel.connections.size === 0) {
      this.byUser.delete(userId!);
      channel.actor.send({ type: 'CLOSE' });
    }
    if (connection.sessionId !== undefined) removeFrom(this.bySession, connection.sessionId, connection);
  }

  private handle(work: WorkContext, clientId: string, command: ClientCommand, known: KnownState<ClientState>) {
    return handleCommand(work, this.deps.store, streams.client(clientId), clientDecider, command, { known });
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.pending += 1;
    const done = () => {
      this.pending -= 1;
      if (this.pending === 0) for (const settled of this.settledWaiters.splice(0)) settled();
    };
    promise.then(done, done);
    return promise;
  }
}

function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  set.add(value);
}

function removeFrom<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) map.delete(key);
}
