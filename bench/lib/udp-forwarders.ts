/**
 * The two forwarders the WebRTC fan-out bench (webrtc-fanout.bench.ts) measures the platform
 * beside, and their clients: a plain UDP forwarder with no WebRTC session logic at all, and the SRTP
 * floor, which does only the cryptography every WebRTC SFU must do (unprotect once with the
 * publisher's session, protect again with each subscriber's).
 */
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import {
  ProtectionProfileAeadAes128Gcm, ProtectionProfileAes128CmHmacSha1_80, RtpHeader, RtpPacket, SrtpSession,
  keyLength, saltLength, type SrtpProfile,
} from 'werift';
import { OPUS_PAYLOAD_TYPE, VP8_PAYLOAD_TYPE, waitFor } from '../../server/src/main/client/media/loopback-peer.ts';

/** Baseline datagrams: one byte 0 registers the sender as a subscriber, one byte 1 forgets them all. */
const REGISTER = Buffer.from([0]);
const RESET = Buffer.from([1]);
/**
 * SRTP floor datagrams (first byte, which no RTP packet starts with): 0 registers the sender as a
 * subscriber and 2 as the publisher, each followed by the SRTP profile (one byte), master key and
 * master salt of its session; 1 forgets them all. The forwarder answers a registration with its
 * first byte alone.
 */
const REGISTER_PUBLISHER = 2;

/** A publisher and N subscribers, whichever forwarder they use. */
export interface Fanout {
  sendVideo(payload: Buffer): void;
  sendAudio(payload: Buffer): void;
  /** Packets received so far by all subscribers together. */
  received(): number;
  /** Every subscriber received both streams. */
  flowing(): boolean;
  close(): Promise<void>;
}

export function isSrtpProfile(profile: number | undefined): profile is SrtpProfile {
  return profile === ProtectionProfileAes128CmHmacSha1_80 || profile === ProtectionProfileAeadAes128Gcm;
}


function bindUdp(): Promise<Socket> {
  const socket = createSocket('udp4');
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve(socket));
  });
}

/** RTP packets as a publisher's sender would put them on the wire (no SRTP unless `seal` protects them). */
function rtpSource(payloadType: number, seal: (packet: RtpPacket) => Buffer = (packet) => packet.serialize()): (payload: Buffer) => Buffer {
  const ssrc = randomBytes(4).readUInt32BE(0);
  let sequenceNumber = randomBytes(2).readUInt16BE(0);
  let timestamp = randomBytes(4).readUInt32BE(0);
  return (payload) => {
    sequenceNumber = (sequenceNumber + 1) & 0xffff;
    timestamp = (timestamp + 3000) >>> 0;
    return seal(new RtpPacket(new RtpHeader({ payloadType, sequenceNumber, timestamp, ssrc, marker: true }), payload));
  };
}

/**
 * Sends each socket's registration datagram to a forwarder until the forwarder answers it with
 * the datagram's first byte (registrations may be lost like any datagram).
 */
async function register(sockets: readonly Socket[], registrations: readonly Buffer[], port: number, hostname: string, what: string): Promise<void> {
  const registered = new Set<number>();
  const acks = sockets.map((s, i) => {
    const onAck = (msg: Buffer): void => {
      if (msg.length === 1 && msg[0] === registrations[i]![0]) registered.add(i);
    };
    s.on('message', onAck);
    return onAck;
  });
  try {
    await waitFor(() => {
      sockets.forEach((s, i) => {
        if (!registered.has(i)) s.send(registrations[i]!, port, hostname);
      });
      return registered.size === sockets.length;
    }, what);
  } finally {
    sockets.forEach((s, i) => s.off('message', acks[i]!));
  }
}

/**
 * The UDP side of a bench forwarder: a publisher socket and `subscribers` sockets, each counting the
 * packets `open` gives back (the RTP it recovers, or undefined for one it refuses).
 */
async function udpClients(url: string, subscribers: number, open: (subscriber: number, msg: Buffer) => Buffer | undefined) {
  const { hostname, port: text } = new URL(url);
  const port = Number(text);
  const publisher = await bindUdp();
  publisher.send(RESET, port, hostname);
  const subs: Socket[] = [];
  const received = new Uint32Array(subscribers);
  const byType = new Set<string>();
  for (let i = 0; i < subscribers; i++) {
    const socket = await bindUdp();
    socket.on('message', (msg: Buffer) => {
      if (msg.length === 1) return;
      const rtp = open(i, msg);
      if (!rtp) return;
      received[i] = received[i]! + 1;
      // the same per-packet look the werift receiver takes: version and payload type
      if (rtp.length > 12 && rtp[0]! >> 6 === 2) byType.add(`${i}:${rtp[1]! & 0x7f}`);
    });
    subs.push(socket);
  }
  /** The load's two streams, sent to the forwarder from the publisher socket. */
  const fanout = (video: (payload: Buffer) => Buffer, audio: (payload: Buffer) => Buffer): Fanout => ({
    sendVideo: (payload) => publisher.send(video(payload), port, hostname),
    sendAudio: (payload) => publisher.send(audio(payload), port, hostname),
    received: () => received.reduce((sum, n) => sum + n, 0),
    flowing: () => byType.size === subscribers * 2,
    close: async () => {
      publisher.send(RESET, port, hostname);
      for (const sock of [publisher, ...subs]) await new Promise<void>((resolve) => sock.close(() => resolve()));
    },
  });
  return { hostname, port, publisher, subs, fanout };
}

export async function baselineFanout(url: string, subscribers: number): Promise<Fanout> {
  const { hostname, port, subs, fanout } = await udpClients(url, subscribers, (_i, msg) => msg);
  await register(subs, subs.map(() => REGISTER), port, hostname, 'the baseline forwarder to register every subscriber');
  return fanout(rtpSource(VP8_PAYLOAD_TYPE), rtpSource(OPUS_PAYLOAD_TYPE));
}

/** An SRTP session keyed alike in both directions. */
function srtpSession(profile: SrtpProfile, key: Buffer, salt: Buffer): SrtpSession {
  return new SrtpSession({ keys: { localMasterKey: key, localMasterSalt: salt, remoteMasterKey: key, remoteMasterSalt: salt }, profile });
}

/** A session with random keys, and the registration datagram of `type` that hands them to the SRTP floor forwarder. */
function randomSrtp(profile: SrtpProfile, type: number): { session: SrtpSession; registration: Buffer } {
  const key = randomBytes(keyLength(profile));
  const salt = randomBytes(saltLength(profile));
  return { session: srtpSession(profile, key, salt), registration: Buffer.concat([Buffer.from([type, profile]), key, salt]) };
}

/** The session of a registration datagram (type, profile, master key, master salt); undefined if malformed. */
function registeredSession(msg: Buffer): SrtpSession | undefined {
  const profile = msg[1];
  if (!isSrtpProfile(profile)) return undefined;
  const keyBytes = keyLength(profile);
  const saltBytes = saltLength(profile);
  if (msg.length !== 2 + keyBytes + saltBytes) return undefined;
  return srtpSession(profile, Buffer.from(msg.subarray(2, 2 + keyBytes)), Buffer.from(msg.subarray(2 + keyBytes)));
}

export async function srtpFloorFanout(url: string, subscribers: number, profile: SrtpProfile): Promise<Fanout> {
  const subSrtp = Array.from({ length: subscribers }, () => randomSrtp(profile, REGISTER[0]!));
  const { hostname, port, publisher, subs, fanout } = await udpClients(url, subscribers, (i, msg) => {
    try {
      return subSrtp[i]!.session.decrypt(msg);
    } catch {
      return undefined; // counts only what unprotects with this subscriber's keys
    }
  });
  const pub = randomSrtp(profile, REGISTER_PUBLISHER);
  await register([publisher], [pub.registration], port, hostname, 'the SRTP floor forwarder to register the publisher');
  await register(subs, subSrtp.map((s) => s.registration), port, hostname, 'the SRTP floor forwarder to register every subscriber');
  const protect = (packet: RtpPacket): Buffer => pub.session.encrypt(packet.payload, packet.header);
  return fanout(rtpSource(VP8_PAYLOAD_TYPE, protect), rtpSource(OPUS_PAYLOAD_TYPE, protect));
}

/**
 * The SRTP floor forwarder: every SRTP packet is unprotected with the publisher's session, parsed
 * (as werift's DTLS transport parses what it unprotects) and protected again with each registered
 * subscriber's session for that subscriber's socket.
 */
export async function serveSrtpFloor(): Promise<void> {
  const socket = await bindUdp();
  let publisher: SrtpSession | undefined;
  let subscribers: { port: number; address: string; session: SrtpSession }[] = [];
  const known = new Set<string>();
  socket.on('message', (msg: Buffer, from) => {
    if (msg.length === 0) return;
    if (msg[0]! >> 6 === 2) {
      if (!publisher) return;
      let packet: RtpPacket;
      try {
        packet = RtpPacket.deSerialize(publisher.decrypt(msg));
      } catch {
        return; // dropped, as a WebRTC transport drops what does not authenticate
      }
      for (const s of subscribers) socket.send(s.session.encrypt(packet.payload, packet.header), s.port, s.address);
      return;
    }
    if (msg[0] === RESET[0]) {
      publisher = undefined;
      subscribers = [];
      known.clear();
      return;
    }
    if (msg[0] === REGISTER_PUBLISHER) {
      publisher ??= registeredSession(msg);
      if (!publisher) return;
    } else if (msg[0] === REGISTER[0]) {
      const key = `${from.address}:${from.port}`;
      if (!known.has(key)) {
        const session = registeredSession(msg);
        if (!session) return;
        known.add(key);
        subscribers.push({ port: from.port, address: from.address, session });
      }
    } else {
      return;
    }
    socket.send(msg.subarray(0, 1), from.port, from.address);
  });
  const { port } = socket.address();
  process.stdout.write(`${JSON.stringify({ role: 'srtp-baseline', url: `udp://127.0.0.1:${port}` })}\n`);
  process.on('SIGTERM', () => process.exit(0));
}

/** The baseline forwarder: every datagram from a non-subscriber goes to every registered subscriber. */
export async function serveBaseline(): Promise<void> {
  const socket = await bindUdp();
  let subscribers: { port: number; address: string }[] = [];
  const known = new Set<string>();
  socket.on('message', (msg: Buffer, from) => {
    if (msg.length === 1) {
      if (msg[0] === 0) {
        const key = `${from.address}:${from.port}`;
        if (!known.has(key)) {
          known.add(key);
          subscribers.push({ port: from.port, address: from.address });
        }
        socket.send(REGISTER, from.port, from.address);
      } else {
        subscribers = [];
        known.clear();
      }
      return;
    }
    for (const s of subscribers) socket.send(msg, s.port, s.address);
  });
  const { port } = socket.address();
  process.stdout.write(`${JSON.stringify({ role: 'baseline', url: `udp://127.0.0.1:${port}` })}\n`);
  process.on('SIGTERM', () => process.exit(0));
}
