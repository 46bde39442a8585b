/**
 * Media nodes' relay routers in this process, over real sockets (the relay path on each node's HTTP
 * server, one UDP socket each) and one bus, for the tests of server/src/media/relayed: real rooms,
 * with fakes standing in for the sessions and their down tracks.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { ServerControl } from '@rtc/protocol';
import { createMemoryBus } from '../../server/src/bus/memory.ts';
import { RelayEndpoint } from '../../server/src/media/relay/index.ts';
import type { ForwardedRtp } from '../../server/src/media/rtp/layers.ts';
import type { DownTrack, Member } from '../../server/src/media/room/member.ts';
import type { Room } from '../../server/src/media/room/room.ts';
import { RelayRouter } from '../../server/src/media/relayed/relay-router.ts';
import { onCleanup, ring } from './relay-nodes.ts';

export interface FakeTrack extends DownTrack {
  readonly got: ForwardedRtp[];
  target: number;
  /** How many times its source restarted (an unmute, a relay link back). */
  restarts: number;
}

/** A subscriber's down track that keeps what it is fed. */
export function fakeTrack(): FakeTrack {
  const t: FakeTrack = {
    kind: 'video', stream: undefined, got: [], target: 0, reportedLoss: 0, restarts: 0,
    forward: (packet) => Boolean(t.got.push(packet)),
    restart: () => {
      t.restarts += 1;
    },
  };
  return t;
}

export type FakeMember = Member & { readonly control: ServerControl[] };

/** A member whose control messages are kept; `keyFrameAsks` collects the key frames asked of it as a publisher. */
export function fakeMember(userId: string, t?: DownTrack, keyFrameAsks?: [number, number][]): FakeMember {
  const control: ServerControl[] = [];
  return {
    participantId: `pa_${userId}`, userId, role: 'speaker', metadata: '', attributes: {}, published: new Map(), control,
    account: { rtpIn: () => undefined, rtpOut: () => undefined },
    keyFrames: keyFrameAsks && { requestKeyFrame: (streamId, layer) => keyFrameAsks.push([streamId, layer]) },
    canSubscribe: () => true, sendControl: (m) => control.push(m), pushMedia: () => undefined, downTrack: () => t,
  };
}

/** The bus every node of these helpers shares (a test may listen to what the nodes announce). */
export const relayBus = createMemoryBus((err) => {
  throw err;
});
const bus = relayBus;
const credentials = ring();

export interface RelayedNode {
  readonly router: RelayRouter;
  readonly rooms: Map<string, Room>;
  readonly id: string;
  /** Stops the node at once, as a killed process: no announcement, its links and sockets gone. */
  kill(): Promise<void>;
}

/** A node on the shared bus whose rooms the test fills; closed at relayCleanup unless killed before. */
export async function relayedNode(now: () => number): Promise<RelayedNode> {
  const http: Server = createServer((_req, res) => res.writeHead(404).end());
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  const id = `127.0.0.1:${port}`;
  const endpoint = await RelayEndpoint.open({ nodeId: id, credentials, host: '127.0.0.1', port: 0 });
  const rooms = new Map<string, Room>();
  const router = new RelayRouter({
    endpoint, url: `ws://${id}`, bus, logger: pino({ level: 'silent' }), now, room: (_p, roomId) => rooms.get(roomId),
  });
  http.on('upgrade', (req, socket, head) => {
    if (!router.server.handleUpgrade(req, socket, head)) socket.destroy();
  });
  let closed = false;
  const kill = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await router.close();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await endpoint.close();
  };
  onCleanup(kill);
  return { router, rooms, id, kill };
}

/** A VP8 descriptor and frame bytes as a publisher's end-to-end encryption leaves them (media.md, "Encrypted encoded frames"). */
export const sealedVp8 = Buffer.concat([Buffer.from([0x10, 0x01]), Buffer.from('sealed-frame-bytes-the-node-cannot-open')]);

export const vp8Packet = (seq: number, layer: number): ForwardedRtp => ({
  layer, ssrc: 100 + layer, seq, timestamp: seq * 3000, marker: false, payload: sealedVp8, vp8: { headerBytes: 1 } as ForwardedRtp['vp8'],
});

/** Runs `step` on each turn of the event loop until `done` holds. */
export async function until(done: () => boolean, step: () => void = () => undefined): Promise<void> {
  while (!done()) {
    step();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
