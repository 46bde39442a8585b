/**
 * The credential only media nodes hold, which opens a relay link between two of them
 * (docs/protocol/relay.md, "Node credential"), and what is computed from it: the proofs of the
 * handshake and the link's keys. The secret itself never crosses a link.
 */
import { createHmac, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import type { MediaMasterKey } from '../../core/keyring.ts';

/** One relay secret and the name a hello gives it. */
export interface RelaySecret {
  /** `static` for `RTC_MEDIA_RELAY_SECRET`, else the media master key's `kid` it is derived from. */
  readonly kid: string;
  readonly secret: Buffer;
}

/** Where a node finds its relay secret: the one it offers, and the one a peer's hello names. */
export interface RelayCredentials {
  /** The secret this node proves itself with when it opens a link. */
  current(): RelaySecret;
  /** The secret named by a peer's hello; undefined when this node has no such key (after a reload where the ring is live). */
  find(kid: string): Promise<RelaySecret | undefined>;
}

/** The kid of a relay secret set by the operator (`RTC_MEDIA_RELAY_SECRET`). */
export const STATIC_RELAY_KID = 'static';

// longer than 16 bytes and ending in non-zero bytes: never the zero-padded HMAC key of a grant id's
// salt (the media key's derivation, docs/protocol/media.md), and another info: an independent key
const RELAY_SALT = Buffer.from('rtc/media-relay/salt/v1');
const RELAY_INFO = Buffer.from('rtc/media-relay/secret/v1');

/** The relay secret of a media master key: HKDF-SHA-256 with the relay's own salt and info. */
export function deriveRelaySecret(master: MediaMasterKey): RelaySecret {
  return { kid: master.kid, secret: Buffer.from(hkdfSync('sha256', master.secret, RELAY_SALT, RELAY_INFO, 32)) };
}

/** Credentials from a secret the operator set: every node of the deployment is given the same one. */
export function staticRelayCredentials(secret: Buffer): RelayCredentials {
  const own: RelaySecret = { kid: STATIC_RELAY_KID, secret: Buffer.from(secret) };
  return {
    current: () => own,
    find: (kid) => Promise.resolve(kid === STATIC_RELAY_KID ? own : undefined),
  };
}

/** The part of the live key ring relay credentials read (core/keyring.ts). */
export interface RelayKeySource {
  readonly mediaMaster: MediaMasterKey;
  readonly mediaMasters: ReadonlyMap<string, MediaMasterKey>;
  /** Looks for a rotation made elsewhere; true when a newer ring was loaded. */
  reloadForUnknownKey(): Promise<boolean>;
}

/**
 * Credentials derived from the key ring every node already shares (keys.json in the data
 * directory, or the database): a link opened under the current media master key, a hello under
 * any key still in the ring accepted, and a key this node does not know yet looked up once.
 */
export function keyRingRelayCredentials(keys: RelayKeySource): RelayCredentials {
  const derived = new Map<string, { master: Buffer; relay: RelaySecret }>();
  const of = (master: MediaMasterKey): RelaySecret => {
    const cached = derived.get(master.kid);
    if (cached && cached.master.equals(master.secret)) return cached.relay;
    const relay = deriveRelaySecret(master);
    derived.set(master.kid, { master: master.secret, relay });
    return relay;
  };
  return {
    current: () => of(keys.mediaMaster),
    async find(kid) {
      let master = keys.mediaMasters.get(kid);
      if (!master && await keys.reloadForUnknownKey()) master = keys.mediaMasters.get(kid);
      return master && of(master);
    },
  };
}

/** What both proofs and the link keys are bound to: both nonces, both node ids, and the hello's fields. */
export interface HandshakeTranscript {
  readonly serverNode: string;
  readonly clientNode: string;
  readonly serverNonce: Buffer;
  readonly clientNonce: Buffer;
  readonly kid: string;
  /** The link id the client receives datagrams under. */
  readonly clientLink: number;
}

/** The welcome's fields the server's proof covers. */
export interface WelcomeFields {
  readonly serverLink: number;
  readonly udpPort: number;
}

const field = (text: string): Buffer => {
  const bytes = Buffer.from(text, 'utf8');
  const length = Buffer.alloc(2);
  length.writeUInt16BE(bytes.length);
  return Buffer.concat([length, bytes]);
};

function transcriptBytes(t: HandshakeTranscript): Buffer {
  const link = Buffer.alloc(4);
  link.writeUInt32BE(t.clientLink);
  return Buffer.concat([Buffer.from('rtc/relay/v1\0'), t.serverNonce, t.clientNonce, field(t.serverNode), field(t.clientNode), field(t.kid), link]);
}

/** The client's proof: HMAC-SHA-256 under the relay secret, labelled so it is never a server's proof. */
export function clientProof(secret: Buffer, t: HandshakeTranscript): Buffer {
  return createHmac('sha256', secret).update('client\0').update(transcriptBytes(t)).digest();
}

/** The server's proof, over the transcript and the welcome, so neither can be altered in transit. */
export function serverProof(secret: Buffer, t: HandshakeTranscript, welcome: WelcomeFields): Buffer {
  const fields = Buffer.alloc(6);
  fields.writeUInt32BE(welcome.serverLink);
  fields.writeUInt16BE(welcome.udpPort, 4);
  return createHmac('sha256', secret).update('server\0').update(transcriptBytes(t)).update(fields).digest();
}

/** The four AES-128-GCM keys of a link, one per direction and channel; each has one sealer. */
export interface LinkKeys {
  readonly controlC2s: KeyObject;
  readonly controlS2c: KeyObject;
  readonly mediaC2s: KeyObject;
  readonly mediaS2c: KeyObject;
}

/** HKDF-SHA-256 of the relay secret, salted with both nonces, each key labelled and bound to both node ids. */
export function deriveLinkKeys(secret: Buffer, t: HandshakeTranscript): LinkKeys {
  const salt = Buffer.concat([t.serverNonce, t.clientNonce]);
  const key = (label: string): KeyObject => createSecretKey(Buffer.from(
    hkdfSync('sha256', secret, salt, Buffer.concat([Buffer.from(`rtc/relay/${label}/v1\0`), field(t.serverNode), field(t.clientNode)]), 16),
  ));
  return { controlC2s: key('control/c2s'), controlS2c: key('control/s2c'), mediaC2s: key('media/c2s'), mediaS2c: key('media/s2c') };
}
