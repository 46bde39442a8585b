import { createHash } from 'node:crypto';

/** A media node a room can be placed on, as the token API announces it to apps. */
export interface MediaNode {
  /** Stable name of the node (the placement follows it, not its address). */
  readonly id: string;
  readonly host: string;
  readonly port: number;
}

/** The node's score for one room: the first 8 bytes of SHA-256 over node id and room key. */
function score(nodeId: string, roomKey: string): bigint {
  return createHash('sha256').update(nodeId).update('\n').update(roomKey).digest().readBigUInt64BE(0);
}

/**
 * The media node that serves a room (project + room id), by rendezvous (highest random weight)
 * hashing: every token node computes the same answer from the same node list, with no shared
 * state, and adding or removing a node moves only the rooms that node wins or held (about 1/N of
 * them). `nodes` are the healthy ones; ties, which need equal 64-bit scores, go to the lower id.
 * Returns undefined when no node is available.
 */
export function placeRoom(nodes: readonly MediaNode[], projectId: string, roomId: string): MediaNode | undefined {
  return rendezvousOrder(nodes, projectId, roomId)[0];
}

/** Sessions a media node (each worker of `rtc serve`) takes before placement prefers another (RTC_MEDIA_MAX_SESSIONS). */
export const DEFAULT_MAX_SESSIONS = 100;

/** A token placed this long ago and not joined yet still counts on its node (a burst of tokens spreads). */
export const RESERVATION_MS = 30_000;

/** How placement weighs the nodes (docs/operations/scale-out.md, "Capacity and placement"). */
export interface PlacementPolicy {
  /** Sessions per node, live and reserved, before a node counts as full. */
  readonly capacity: number;
  /**
   * Whether a live room whose nodes are all full opens on another node. Only a deployment whose
   * nodes relay a room's streams to each other may: until then a room on two nodes is two rooms.
   */
  readonly spill: boolean;
}

/** What one placement step sees of the deployment, read in the same atomic step that records its answer. */
export interface PlacementView {
  /** The live nodes the room is on. */
  readonly roomNodes: readonly string[];
  /** The node among them where this user has a live session, or a reservation from its last token. */
  readonly userNode: { readonly id: string; readonly live: boolean } | undefined;
  /** Every live node, in the room's rendezvous order (the first choice for a new room first). */
  readonly candidates: readonly string[];
  /** Live sessions plus unexpired reservations of a node. */
  load(nodeId: string): number;
}

/** A placement: the node, whether to reserve a place there for the user, and whether it was made over capacity. */
export interface PlacementChoice {
  readonly nodeId: string;
  readonly reserve: boolean;
  readonly overCapacity: boolean;
}

/**
 * The placement rule, one step (docs/operations/scale-out.md, "Capacity and placement"): a user
 * with a live session (or a reservation) in the room goes back to that node; a live room goes to
 * its least-loaded node that has room; a new room (or, with `spill`, a live room whose nodes are
 * all full) to the first node in rendezvous order that has room; when none has, to the least-loaded
 * node anyway, counted as over capacity (without `spill`, the room's own). Undefined: no live node.
 * The Redis directory's script (redis/media-nodes.ts) applies the same rule; one test suite holds both to it.
 */
export function choosePlacement(view: PlacementView, policy: PlacementPolicy): PlacementChoice | undefined {
  if (view.userNode) return { nodeId: view.userNode.id, reserve: !view.userNode.live, overCapacity: false };
  const loads = new Map<string, number>();
  const load = (id: string): number => {
    let l = loads.get(id);
    if (l === undefined) loads.set(id, l = view.load(id));
    return l;
  };
  const hasRoom = (id: string): boolean => load(id) < policy.capacity;
  const leastLoaded = (ids: readonly string[]): string | undefined =>
    ids.reduce<string | undefined>((best, id) => (best === undefined || load(id) < load(best) ? id : best), undefined);
  const inRoom = view.roomNodes.filter(hasRoom);
  if (inRoom.length > 0) return { nodeId: leastLoaded(inRoom)!, reserve: true, overCapacity: false };
  if (view.roomNodes.length > 0 && !policy.spill) return { nodeId: leastLoaded(view.roomNodes)!, reserve: true, overCapacity: true };
  const open = view.candidates.find(hasRoom);
  if (open !== undefined) return { nodeId: open, reserve: true, overCapacity: false };
  const fallback = leastLoaded([...view.roomNodes, ...view.candidates]);
  return fallback === undefined ? undefined : { nodeId: fallback, reserve: true, overCapacity: true };
}

/** The live nodes in the rendezvous order of one room (highest score first; ties to the lower id). */
export function rendezvousOrder<T extends { readonly id: string }>(nodes: readonly T[], projectId: string, roomId: string): T[] {
  const roomKey = `${projectId}\n${roomId}`;
  const scored = nodes.map((node) => ({ node, s: score(node.id, roomKey) }));
  scored.sort((a, b) => (a.s !== b.s ? (a.s > b.s ? -1 : 1) : a.node.id < b.node.id ? -1 : a.node.id > b.node.id ? 1 : 0));
  return scored.map((x) => x.node);
}

/** What a media node reports with each announcement: its joined sessions, WebRTC and WebSocket-only alike. */
export interface NodeLoad {
  /** Joined sessions, from join to end. */
  readonly sessions: number;
  /** The users with a joined session here, each as `placementUserKey` names it. */
  readonly users: readonly string[];
}

/** One user of one room, as reservations and node reports name it. */
export const placementUserKey = (projectId: string, roomId: string, userId: string): string => `${projectId}\n${roomId}\n${userId}`;

/**
 * The media nodes of a deployment (docs/operations/scale-out.md, "Media nodes"): token nodes place
 * each user of a room on a live node with room, following the room's nodes while it lives.
 */
export interface MediaNodeDirectory {
  /** The media node of a user in a room; refused with 503 `unavailable` when no media node is live. */
  place(projectId: string, roomId: string, userId: string, ttlSeconds: number): Promise<MediaNode>;
  /** The live nodes as last read (at most a second old). */
  nodes(): readonly MediaNode[];
  /** Placements this process made over capacity, every node being full (a metric). */
  overCapacityPlacements(): number;
  /**
   * Announces a media node with its load, read at each announcement (resolves once the first
   * announcement was answered or reported to `onError`), until the returned function withdraws it
   * (it then receives no new rooms).
   */
  announce(node: MediaNode, onError: (err: unknown) => void, load?: () => NodeLoad): Promise<() => Promise<void>>;
  close(): void;
}
