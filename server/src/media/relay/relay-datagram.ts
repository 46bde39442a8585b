/**
 * Media datagrams of a relay link (docs/protocol/relay.md, "Datagrams"): a 20-byte header in
 * clear, authenticated as associated data, then the packet sealed with AES-128-GCM under the
 * link's key of that direction. The nonce is a label and the header's sequence number; each key has
 * one sealer, whose sequence starts at 1 and grows by one per datagram, so a nonce is never reused.
 */
import { createCipheriv, createDecipheriv, type KeyObject } from 'node:crypto';
import { ReplayWindow } from '@rtc/protocol';

export const DATAGRAM_VERSION = 1;
export const DATAGRAM_HEADER_BYTES = 20;
export const DATAGRAM_TAG_BYTES = 16;
/** Largest packet a datagram carries: an RTP packet fits well below it (docs/protocol/relay.md). */
export const MAX_DATAGRAM_PAYLOAD = 1500;
/** Sequence numbers behind the newest still accepted once (the media protocol's window size). */
export const DATAGRAM_REPLAY_WINDOW = 1024;

export const DatagramType = { rtp: 1, rtcp: 2, keepalive: 3 } as const;
export type DatagramTypeCode = (typeof DatagramType)[keyof typeof DatagramType];

const NONCE_LABEL = 0x72_6c_79_01; // "rly" 1
const MAX_SEQUENCE = Number.MAX_SAFE_INTEGER;

/** Why a datagram was dropped; each is counted (RelayEndpoint stats). */
export type DropReason = 'malformed' | 'unknown_link' | 'auth' | 'replay';

/** Where a datagram goes: the receiver's link id (the one it chose), and what it carries. */
export interface DatagramHeader {
  readonly type: DatagramTypeCode;
  readonly layer: number;
  readonly link: number;
  readonly sequence: number;
  readonly track: number;
}

/** The link id a datagram names (bytes 4-7), read before anything else; undefined when it is not one of ours. */
export function datagramLink(datagram: Buffer): number | undefined {
  if (datagram.length < DATAGRAM_HEADER_BYTES + DATAGRAM_TAG_BYTES || datagram[0] !== DATAGRAM_VERSION) return undefined;
  return datagram.readUInt32BE(4);
}

/** Seals the datagrams of one direction of a link. Not safe to share between two links. */
export class DatagramSealer {
  private sequence = 0;
  private readonly key: KeyObject;
  private readonly link: number;
  // reused by every seal: createCipheriv copies the nonce, and seal returns before it could change
  private readonly nonce = Buffer.alloc(12);

  constructor(key: KeyObject, peerLink: number) {
    this.key = key;
    this.link = peerLink;
    this.nonce.writeUInt32BE(NONCE_LABEL, 0);
  }

  /**
   * The datagram as three buffers to send in one `send` (header, ciphertext, tag): the payload is
   * never copied into a joined buffer. Throws a TypeError for a payload over MAX_DATAGRAM_PAYLOAD.
   */
  seal(type: DatagramTypeCode, track: number, layer: number, payload: Uint8Array): [Buffer, Buffer, Buffer] {
    if (payload.length > MAX_DATAGRAM_PAYLOAD) throw new TypeError(`a relay datagram carries at most ${MAX_DATAGRAM_PAYLOAD} bytes`);
    if (this.sequence >= MAX_SEQUENCE) throw new TypeError('the link has sealed its last datagram; open a new link');
    const sequence = ++this.sequence;
    // a fresh header per datagram: the socket may still hold the previous one when seal returns
    const header = Buffer.allocUnsafe(DATAGRAM_HEADER_BYTES);
    header[0] = DATAGRAM_VERSION;
    header[1] = type;
    header[2] = layer;
    header[3] = 0;
    header.writeUInt32BE(this.link, 4);
    header.writeUIntBE(Math.floor(sequence / 2 ** 32), 8, 4);
    header.writeUInt32BE(sequence >>> 0, 12);
    header.writeUInt32BE(track, 16);
    this.nonce.writeUInt32BE(Math.floor(sequence / 2 ** 32), 4);
    this.nonce.writeUInt32BE(sequence >>> 0, 8);
    const cipher = createCipheriv('aes-128-gcm', this.key, this.nonce, { authTagLength: DATAGRAM_TAG_BYTES });
    cipher.setAAD(header);
    const ciphertext = cipher.update(payload);
    cipher.final();
    return [header, ciphertext, cipher.getAuthTag()];
  }
}

export type OpenResult =
  | { readonly ok: true; readonly header: DatagramHeader; readonly payload: Buffer }
  | { readonly ok: false; readonly reason: DropReason };

/** Opens the datagrams of one direction of a link: authenticates each, and accepts each sequence number once. */
export class DatagramOpener {
  private readonly key: KeyObject;
  private readonly link: number;
  private readonly window = new ReplayWindow(DATAGRAM_REPLAY_WINDOW);
  private readonly nonce = Buffer.alloc(12);

  constructor(key: KeyObject, ownLink: number) {
    this.key = key;
    this.link = ownLink;
    this.nonce.writeUInt32BE(NONCE_LABEL, 0);
  }

  open(datagram: Buffer): OpenResult {
    if (datagram.length < DATAGRAM_HEADER_BYTES + DATAGRAM_TAG_BYTES || datagram[0] !== DATAGRAM_VERSION ||
        datagram.length > DATAGRAM_HEADER_BYTES + MAX_DATAGRAM_PAYLOAD + DATAGRAM_TAG_BYTES) {
      return { ok: false, reason: 'malformed' };
    }
    const type = datagram[1]!;
    if (type !== DatagramType.rtp && type !== DatagramType.rtcp && type !== DatagramType.keepalive) return { ok: false, reason: 'malformed' };
    if (datagram.readUInt32BE(4) !== this.link) return { ok: false, reason: 'unknown_link' };
    const high = datagram.readUInt32BE(8);
    const sequence = high * 2 ** 32 + datagram.readUInt32BE(12);
    if (sequence === 0 || sequence > MAX_SEQUENCE) return { ok: false, reason: 'malformed' };
    if (!this.window.check(sequence)) return { ok: false, reason: 'replay' };
    this.nonce.writeUInt32BE(high, 4);
    this.nonce.writeUInt32BE(datagram.readUInt32BE(12), 8);
    const end = datagram.length - DATAGRAM_TAG_BYTES;
    let payload: Buffer;
    try {
      const decipher = createDecipheriv('aes-128-gcm', this.key, this.nonce, { authTagLength: DATAGRAM_TAG_BYTES });
      decipher.setAAD(datagram.subarray(0, DATAGRAM_HEADER_BYTES));
      decipher.setAuthTag(datagram.subarray(end));
      payload = decipher.update(datagram.subarray(DATAGRAM_HEADER_BYTES, end));
      decipher.final();
    } catch {
      return { ok: false, reason: 'auth' };
    }
    // recorded only once it authenticated: a forged datagram cannot move the window
    this.window.commit(sequence);
    const header: DatagramHeader = { type: type as DatagramTypeCode, layer: datagram[2]!, link: this.link, sequence, track: datagram.readUInt32BE(16) };
    return { ok: true, header, payload };
  }
}
