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
  const roomKey = `${projectId}\n${roomId}`;
  let best: MediaNode | undefined;
  let bestScore = -1n;
  for (const node of nodes) {
    const s = score(node.id, roomKey);
    if (s > bestScore || (s === bestScore && best !== undefined && node.id < best.id)) {
      best = node;
      bestScore = s;
    }
  }
  return best;
}

/**
 * The media nodes of a cluster (docs/operations/scale-out.md, "Media nodes"): token nodes place each
 * room on a live node and every participant of the room is sent to it while the room lives.
 */
export interface MediaNodeDirectory {
  /** The media node of a room; refused with 503 `unavailable` when no media node is live. */
  place(projectId: string, roomId: string, ttlSeconds: number): Promise<MediaNode>;
  /** The live nodes as last read (at most a second old). */
  nodes(): readonly MediaNode[];
  /**
   * Announces a media node (resolves once the first announcement was answered or reported to
   * `onError`) until the returned function withdraws it (it then receives no new rooms).
   */
  announce(node: MediaNode, onError: (err: unknown) => void): Promise<() => Promise<void>>;
  close(): void;
}
