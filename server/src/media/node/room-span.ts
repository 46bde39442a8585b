/**
 * One room over several media nodes (docs/protocol/media.md, "Rooms across media nodes"): each node
 * tells the room's other nodes on the bus who is joined there (`media.members`), and shows them to
 * its own members as members of the room, with `participant_joined`, `participant_left` and
 * `participant_metadata` as for a member of its own. Streams cross by the relays
 * (media/relayed/relay-router.ts); the room service API's changes reach every node on the bus.
 */
import type { Logger } from 'pino';
import type { BusEvent, EventBus, SpanMember } from '../../core/ports.ts';
import { MEDIA_NODE_HEARTBEAT_MS } from '../../rooms/presence.ts';
import { describeMember, type Member, type RemoteMember, type Room } from '../room/room.ts';

/**
 * How long members of another node read from the store, as a room opens here, wait for their
 * node's answer on the bus before they count as gone (their node no longer holds the room).
 */
export const SPAN_CONFIRM_MS = 3000;

/**
 * A member of another node that the store's presence no longer lists (it left, or its node died
 * and its rows went stale) is dropped once known this long (ms): by then its own row was written.
 */
export const SPAN_SWEEP_AFTER_MS = 30_000;

export interface RoomSpanOptions {
  readonly bus: EventBus;
  /** This node's id, `host:port`. */
  readonly nodeId: string;
  readonly logger: Logger;
  /** The room open on this node, if any. */
  readonly room: (projectId: string, roomId: string) => Room | undefined;
  readonly confirmMs?: number | undefined;
  readonly now: () => number;
  /** The rooms open on this node, and the participant ids the store's presence lists live in one. */
  readonly rooms: () => Iterable<Room>;
  readonly listed: (room: Room) => Promise<ReadonlySet<string>>;
  /** How often the rooms with members of other nodes are checked against the store (ms). */
  readonly sweepMs?: number | undefined;
}

type MembersEvent = BusEvent & { readonly type: 'media.members' };

export class RoomSpan {
  private readonly o: RoomSpanOptions;
  private readonly unsubscribe: () => void;
  /** Members of other nodes read from the store that their node did not confirm yet, by room. */
  private readonly unconfirmed = new WeakMap<Room, Set<string>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** When each member of another node was first known here (ms), by participant id. */
  private readonly knownSince = new Map<string, number>();
  private closed = false;

  constructor(options: RoomSpanOptions) {
    this.o = options;
    this.unsubscribe = options.bus.subscribe((event) => {
      if (event.type === 'media.members' && event.node !== options.nodeId) this.received(event);
    });
    // members of a node that died are not announced as gone: the store's presence tells
    const sweep = setInterval(() => {
      for (const room of options.rooms()) {
        if (room.remote.size === 0) continue;
        options.listed(room).then((listed) => this.sweep(room, listed),
          (err: unknown) => options.logger.warn({ err }, 'media: reading the room\'s participants on other nodes failed'));
      }
    }, options.sweepMs ?? MEDIA_NODE_HEARTBEAT_MS);
    sweep.unref();
    this.timers.add(sweep);
  }

  /**
   * A room just opened here, before its first member is admitted: the participants the store lists
   * on the room's other nodes (presence rows), shown from the first `joined` on. Those their node
   * does not confirm within `confirmMs` of the room's announcement are dropped.
   */
  seed(room: Room, members: readonly RemoteMember[]): void {
    const pending = new Set<string>();
    for (const m of members) {
      if (m.node === this.o.nodeId) continue;
      room.remote.set(m.participantId, m);
      this.knownSince.set(m.participantId, this.o.now());
      pending.add(m.participantId);
    }
    if (pending.size > 0) this.unconfirmed.set(room, pending);
  }

  /** A member joined here: the room's other nodes are told (the first member's announcement asks theirs). */
  joined(room: Room, member: Member): void {
    if (room.members.size > 1) return this.publish(room, { members: [spanMember(member)], left: [], whole: false, ask: false });
    this.publish(room, { members: [...room.members.values()].map(spanMember), left: [], whole: true, ask: true });
    const pending = this.unconfirmed.get(room);
    if (!pending) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.unconfirmed.delete(room);
      for (const id of pending) this.drop(room, id);
    }, this.o.confirmMs ?? SPAN_CONFIRM_MS);
    timer.unref();
    this.timers.add(timer);
  }

  /** A member here changed its metadata or attributes (the room service API). */
  changed(room: Room, member: Member): void {
    this.publish(room, { members: [spanMember(member)], left: [], whole: false, ask: false });
  }

  /** A member here left. */
  left(room: Room, member: Member): void {
    this.publish(room, { members: [], left: [member.participantId], whole: false, ask: false });
  }

  /**
   * Drops the members of other nodes that the store's presence no longer lists (`listed`: the
   * participant ids of the room's live rows) and that were known for `SPAN_SWEEP_AFTER_MS`: a node
   * that died tells nobody its members left.
   */
  sweep(room: Room, listed: ReadonlySet<string>): void {
    const before = this.o.now() - SPAN_SWEEP_AFTER_MS;
    for (const id of [...room.remote.keys()]) {
      if (!listed.has(id) && (this.knownSince.get(id) ?? 0) <= before) this.drop(room, id);
    }
  }

  /** The room closed here: what this node knew of the other nodes' members goes with it. */
  forget(room: Room): void {
    for (const id of room.remote.keys()) this.knownSince.delete(id);
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private publish(room: Room, change: Pick<MembersEvent, 'members' | 'left' | 'whole' | 'ask'>): void {
    if (this.closed) return;
    this.o.bus.publish({ type: 'media.members', projectId: room.projectId, roomId: room.roomId, node: this.o.nodeId, ...change })
      .catch((err: unknown) => this.o.logger.warn({ err }, 'media: telling the room\'s other nodes of its members failed'));
  }

  private received(event: MembersEvent): void {
    const room = this.o.room(event.projectId, event.roomId);
    if (!room) return;
    // a node the room just opened on asks: this one answers with everyone joined here (nobody, too)
    if (event.ask) this.publish(room, { members: [...room.members.values()].map(spanMember), left: [], whole: true, ask: false });
    const pending = this.unconfirmed.get(room);
    if (event.whole) {
      const listed = new Set(event.members.map((m) => m.participantId));
      for (const m of [...room.remote.values()]) if (m.node === event.node && !listed.has(m.participantId)) this.drop(room, m.participantId);
    }
    for (const m of event.members) {
      pending?.delete(m.participantId);
      this.put(room, { ...m, node: event.node });
    }
    for (const id of event.left) this.drop(room, id);
  }

  /** A member of another node joined or changed: this node's members are told as of one of theirs. */
  private put(room: Room, member: RemoteMember): void {
    const known = room.remote.get(member.participantId);
    room.remote.set(member.participantId, member);
    if (!known) this.knownSince.set(member.participantId, this.o.now());
    if (!known) {
      room.broadcast({ type: 'participant_joined', participant: describeMember(member) });
    } else if (known.metadata !== member.metadata || !sameAttributes(known.attributes, member.attributes)) {
      room.broadcast({
        type: 'participant_metadata', participant_id: member.participantId, user_id: member.userId,
        metadata: member.metadata, attributes: { ...member.attributes },
      });
    }
  }

  private drop(room: Room, participantId: string): void {
    const known = room.remote.get(participantId);
    if (!known) return;
    room.remote.delete(participantId);
    this.knownSince.delete(participantId);
    room.broadcast({ type: 'participant_left', participant_id: participantId, user_id: known.userId });
  }
}

function spanMember(member: Member): SpanMember {
  return { participantId: member.participantId, userId: member.userId, role: member.role, metadata: member.metadata, attributes: { ...member.attributes } };
}

function sameAttributes(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
