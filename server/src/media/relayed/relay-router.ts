/**
 * A media node's relays (docs/protocol/relay.md): it tells the room's other nodes, on the bus, which
 * streams it originates in each room it holds, learns theirs, and for each room with members here
 * receives every stream of another node over one link to that node, fanned out here by a relay-fed
 * Stream; the streams it originates are served to the nodes that subscribe over the links they open.
 * Each node opens its own link to each origin it relays from: a node is one hop from every origin,
 * never a chain.
 */
import type { Logger } from 'pino';
import type { EventBus, OriginStream } from '../../core/ports.ts';
import { RelayLink, RelayServer, type RelayChannel, type RelayEndpoint, type RelayHandlers, type SetTimer } from '../relay/index.ts';
import { roomKey, type Room } from '../room/room.ts';
import { RelayFeed } from './relay-feed.ts';
import { RelayOrigin } from './relay-origin.ts';

/** How often each feed asks for the layers its down tracks need and for the packets that did not cross (ms). */
export const RELAY_TICK_MS = 20;
/**
 * A node's announcement of a room's streams holds this long (ms), as a media node's own announcement
 * in the node directory does (NODE_LIVENESS_MS): a node that stops announcing (killed) is taken as
 * gone, and its streams with it.
 */
export const ANNOUNCEMENT_LIVENESS_MS = 6_000;
/**
 * How often announcements are checked for a repeat or for their age (ms). The feeds' tick runs only
 * while this node relays from another: a node with no relay wakes 4 times a second for this, not 50.
 */
const ANNOUNCEMENT_CHECK_MS = 250;

export interface RelayRouterOptions {
  readonly endpoint: RelayEndpoint;
  /** This node's media address, `ws://host:port` (or `wss://`), which the other nodes dial. */
  readonly url: string;
  readonly bus: EventBus;
  readonly logger: Logger;
  readonly now: () => number;
  /** The room open on this node, if any. */
  readonly room: (projectId: string, roomId: string) => Room | undefined;
  readonly setTimer?: SetTimer | undefined;
  readonly ca?: Buffer | undefined;
  /** How long another node's announcement holds without being repeated (ms); each node repeats its own a third of it apart. */
  readonly livenessMs?: number | undefined;
}

interface Peer {
  readonly link: RelayLink;
  readonly feeds: Map<number, { readonly key: string; readonly feed: RelayFeed }>;
  nextTrack: number;
}

export class RelayRouter {
  readonly server: RelayServer;
  readonly endpoint: RelayEndpoint;
  private readonly o: RelayRouterOptions;
  private readonly nodeId: string;
  private readonly peers = new Map<string, Peer>();
  /** What each other node originates, by room key and node id. */
  private readonly directory = new Map<string, Map<string, { url: string; streams: OriginStream[]; seenMs: number }>>();
  /** Rooms whose last announcement named streams, by room key, and when it was sent: repeated while they do. */
  private readonly announced = new Map<string, { readonly projectId: string; readonly roomId: string; sentMs: number }>();
  /**
   * What each room's last announcement said (its streams as JSON): a change of the room that leaves
   * them as they were (a member joining or leaving) is not announced again, so that a large room's
   * joins and departures do not each cost every node a message.
   */
  private readonly lastSaid = new Map<string, string>();
  /**
   * Rooms of this node that another node spoke of (an announcement or a subscription): only their
   * announcements are repeated, so a room on one node costs the bus nothing between its changes.
   */
  private readonly spanned = new Set<string>();
  private readonly livenessMs: number;
  private readonly unsubscribe: () => void;
  private readonly timer: NodeJS.Timeout;
  /** The feeds' tick (RELAY_TICK_MS), while there is a link to another node. */
  private feedTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: RelayRouterOptions) {
    this.o = options;
    this.endpoint = options.endpoint;
    this.nodeId = options.endpoint.nodeId;
    this.livenessMs = options.livenessMs ?? ANNOUNCEMENT_LIVENESS_MS;
    this.server = new RelayServer({
      endpoint: options.endpoint, setTimer: options.setTimer,
      onChannel: (channel) => this.accepted(channel),
      onRefused: (reason, address) => options.logger.warn({ reason, address }, 'media: a relay link was refused'),
    });
    this.unsubscribe = options.bus.subscribe((event) => {
      if (event.type !== 'media.streams' || event.node === this.nodeId) return;
      if (this.o.room(event.projectId, event.roomId)) this.spanned.add(roomKey(event.projectId, event.roomId));
      this.learned(event.projectId, event.roomId, event.node, event.url, event.streams);
      // a node a member just joined asks what the others originate in the room
      if (event.ask && this.o.room(event.projectId, event.roomId)) this.announce(event.projectId, event.roomId, false, true);
    });
    this.timer = setInterval(() => this.keepAnnouncements(this.o.now()), ANNOUNCEMENT_CHECK_MS);
    this.timer.unref();
  }

  /**
   * A room of this node changed: its first member here joined (`ask`: the other nodes answer with
   * what they originate there), a member left, or what it publishes changed. Tells the other nodes
   * what it originates there when that changed, and relays what the others do while it has members.
   */
  roomChanged(projectId: string, roomId: string, ask = false): void {
    if (this.closed) return;
    this.announce(projectId, roomId, ask, ask);
    this.sync(projectId, roomId);
  }

  /** Feeds of this node (for tests and metrics). */
  get feeds(): RelayFeed[] {
    return [...this.peers.values()].flatMap((p) => [...p.feeds.values()].map((f) => f.feed));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    clearInterval(this.feedTimer);
    this.unsubscribe();
    for (const peer of this.peers.values()) peer.link.close();
    this.peers.clear();
    this.server.close();
  }

  /** Tells the other nodes what this one originates in a room: when it changed, or always when `force`d (an answer, a repeat). */
  private announce(projectId: string, roomId: string, ask: boolean, force: boolean): void {
    const room = this.o.room(projectId, roomId);
    // audio and video cross over RTP, a stream of WebSocket frames (data) in `frame` messages
    const streams: OriginStream[] = room ? [...room.streams.values()].flatMap((s) => s.relayedFrom !== undefined || !s.live ? [] : [{
      streamId: s.id, kind: s.kind, layers: s.layers?.count ?? 1, participantId: s.publisher.participantId, userId: s.publisher.userId, muted: s.muted,
    }]) : [];
    const key = roomKey(projectId, roomId);
    if (!room) this.spanned.delete(key);
    const said = JSON.stringify(streams);
    // a room that never originated a stream here, or whose streams are as last said, is not announced again
    if (!force && said === (this.lastSaid.get(key) ?? '[]')) return;
    if (room) this.lastSaid.set(key, said);
    else this.lastSaid.delete(key);
    if (streams.length > 0) this.announced.set(key, { projectId, roomId, sentMs: this.o.now() });
    else this.announced.delete(key);
    this.o.bus.publish({ type: 'media.streams', projectId, roomId, node: this.nodeId, url: this.o.url, streams, ask })
      .catch((err: unknown) => this.o.logger.warn({ err }, 'media: announcing a room\'s streams failed'));
  }

  private learned(projectId: string, roomId: string, node: string, url: string, streams: readonly OriginStream[]): void {
    const key = roomKey(projectId, roomId);
    let nodes = this.directory.get(key);
    if (!nodes) this.directory.set(key, nodes = new Map());
    if (streams.length === 0) nodes.delete(node);
    else nodes.set(node, { url, streams: [...streams], seenMs: this.o.now() });
    if (nodes.size === 0) this.directory.delete(key);
    this.sync(projectId, roomId);
  }

  /** Opens the feeds a room with members here needs, and closes those it no longer does. */
  private sync(projectId: string, roomId: string): void {
    const key = roomKey(projectId, roomId);
    const room = this.o.room(projectId, roomId);
    const wanted = room && room.members.size > 0 ? this.directory.get(key) : undefined;
    for (const [node, peer] of this.peers) {
      for (const [track, f] of peer.feeds) {
        if (f.key !== key) continue;
        const still = wanted?.get(node)?.streams.some((s) => s.streamId === f.feed.stream.id && s.kind === f.feed.stream.kind);
        if (!still) this.endFeed(peer, track, room);
      }
      // a node this one relays nothing from any more: its link closes (no attempts to reopen it to a dead node)
      if (peer.feeds.size === 0) {
        this.peers.delete(node);
        peer.link.close();
      }
    }
    if (room && wanted) this.openFeeds(key, projectId, roomId, room, wanted);
    this.tickWhileLinked();
  }

  /** Runs the feeds' tick while a link to another node is open, and stops it with the last. */
  private tickWhileLinked(): void {
    if (this.peers.size > 0 && !this.closed) {
      if (this.feedTimer) return;
      this.feedTimer = setInterval(() => this.tick(), RELAY_TICK_MS);
      this.feedTimer.unref();
    } else if (this.feedTimer) {
      clearInterval(this.feedTimer);
      this.feedTimer = undefined;
    }
  }

  private openFeeds(
    key: string, projectId: string, roomId: string, room: Room,
    wanted: ReadonlyMap<string, { readonly url: string; readonly streams: readonly OriginStream[] }>,
  ): void {
    for (const [node, { url, streams }] of wanted) {
      for (const s of streams) {
        const relayed = room.streams.get(s.streamId);
        // its members are told of a mute or unmute at the origin as of one here
        if (relayed?.relayedFrom === node && relayed.muted !== s.muted) room.setMuted(relayed, s.muted);
        const has = [...(this.peers.get(node)?.feeds.values() ?? [])].find((f) => f.key === key && f.feed.stream.id === s.streamId);
        // its simulcast layers became known at the origin after it was announced
        has?.feed.setLayerCount(s.layers);
        // a stream already relayed from another node (its publisher moved) is taken from here once that node's is gone
        if (has || relayed) continue;
        const peer = this.peerOf(node, url);
        const track = peer.nextTrack++;
        const feed = new RelayFeed({
          track, ref: { project_id: projectId, room_id: roomId, stream_id: s.streamId }, kind: s.kind, layerCount: s.layers,
          publisher: { participantId: s.participantId, userId: s.userId }, link: peer.link, now: this.o.now,
        });
        feed.stream.relayedFrom = node;
        feed.stream.muted = s.muted;
        peer.feeds.set(track, { key, feed });
        feed.refresh();
      }
    }
  }

  private endFeed(peer: Peer, track: number, room: Room | undefined): void {
    const f = peer.feeds.get(track);
    if (!f) return;
    peer.feeds.delete(track);
    if (room && room.streams.get(f.feed.stream.id) === f.feed.stream) room.removeStream(f.feed.stream, false);
    f.feed.close();
  }

  private peerOf(node: string, url: string): Peer {
    const existing = this.peers.get(node);
    if (existing) return existing;
    const feeds = new Map<number, { key: string; feed: RelayFeed }>();
    const handlers: RelayHandlers = {
      onRtp: (track, layer, packet) => feeds.get(track)?.feed.onRtp(layer, packet),
      onFrame: (track, frame) => feeds.get(track)?.feed.onFrame(frame),
      onStreamKey: (track, epoch, key) => this.keyed(peer, track, epoch, key),
      onStreamEnd: (track) => {
        const f = feeds.get(track);
        if (!f) return;
        // gone at its origin: forgotten until the origin announces it again
        const nodes = this.directory.get(f.key)?.get(node);
        if (nodes) nodes.streams = nodes.streams.filter((s) => s.streamId !== f.feed.stream.id);
        const ref = f.feed.stream;
        const room = ref.live ? this.roomOfKey(f.key) : undefined;
        this.endFeed(peer, track, room);
      },
    };
    const link = new RelayLink({
      endpoint: this.o.endpoint, url, peerNode: node, handlers, setTimer: this.o.setTimer, ca: this.o.ca,
      onUp: () => {
        for (const f of feeds.values()) f.feed.linkUp();
      },
      onDown: (reason) => {
        this.o.logger.warn({ node, reason }, 'media: a relay link broke; its streams pause until it is back');
        for (const f of feeds.values()) f.feed.linkDown();
      },
    });
    const peer: Peer = { link, feeds, nextTrack: 1 };
    this.peers.set(node, peer);
    return peer;
  }

  private keyed(peer: Peer, track: number, epoch: number, key: Uint8Array): void {
    const f = peer.feeds.get(track);
    if (!f) return;
    const wasReady = f.feed.ready;
    f.feed.onStreamKey(epoch, key);
    if (wasReady) return;
    const room = this.roomOfKey(f.key);
    if (!room || !room.addRelayed(f.feed.stream)) return;
    // its subscribers are known now: the layers they need are asked for in this turn, before any of
    // them hears of the stream (a frame of a WebSocket stream sent on the way would not cross), and
    // its down tracks need a key frame to start
    f.feed.refresh();
    f.feed.stream.requestKeyFrame(-1);
  }

  /**
   * Repeats this node's announcements of rooms where it originates streams and that span nodes, and forgets what another
   * node announced once its announcement is older than the liveness: a killed node stops announcing,
   * so its streams are removed for this node's members, and a stream that moves with its publisher
   * to another node is relayed from there once that node announces it.
   */
  private keepAnnouncements(nowMs: number): void {
    for (const [key, a] of [...this.announced]) {
      if (!this.o.room(a.projectId, a.roomId)) {
        // the room closed here without a last announcement: the others forget it by its age
        this.announced.delete(key);
        this.spanned.delete(key);
      } else if (this.spanned.has(key) && nowMs - a.sentMs >= this.livenessMs / 3) {
        this.announce(a.projectId, a.roomId, false, true);
      }
    }
    // a room this node only subscribes in, closed here: nothing of it is kept
    for (const key of this.spanned) if (!this.roomOfKey(key)) this.spanned.delete(key);
    for (const key of this.lastSaid.keys()) if (!this.roomOfKey(key)) this.lastSaid.delete(key);
    for (const [key, nodes] of [...this.directory]) {
      const gone = [...nodes].filter(([, n]) => nowMs - n.seenMs > this.livenessMs);
      if (gone.length === 0) continue;
      for (const [node] of gone) {
        this.o.logger.warn({ node }, 'media: a node stopped announcing its streams; they are gone from its rooms here');
        nodes.delete(node);
      }
      if (nodes.size === 0) this.directory.delete(key);
      const [projectId, roomId] = key.split('\u0000') as [string, string];
      this.sync(projectId, roomId);
    }
  }

  private roomOfKey(key: string): Room | undefined {
    const [projectId, roomId] = key.split('\u0000') as [string, string];
    return this.o.room(projectId, roomId);
  }

  /** A node opened a link to this one: this node serves the streams it originates over it. */
  private accepted(channel: RelayChannel): void {
    const origin = new RelayOrigin(channel, (ref) => {
      const room = this.o.room(ref.project_id, ref.room_id);
      if (room) this.spanned.add(roomKey(ref.project_id, ref.room_id));
      return room?.streams.get(ref.stream_id);
    }, (ref, stream) => {
      const room = this.o.room(ref.project_id, ref.room_id);
      if (room?.streams.get(ref.stream_id) === stream) room.scheduleRotation(stream);
    }, this.o.now);
    channel.handlers = origin.handlers;
    channel.onClose = () => origin.close();
  }

  private tick(): void {
    for (const peer of this.peers.values()) {
      for (const { feed } of peer.feeds.values()) {
        if (!feed.ready) continue;
        feed.refresh();
        feed.flush();
      }
    }
  }
}
