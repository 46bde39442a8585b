/**
 * The DTLS check werift 0.23.0 leaves out (docs/decisions.md, "Audio and video over WebRTC").
 *
 * werift compares the fingerprint of the certificate a peer presents with the one of the offer, but
 * never checks that the peer holds the certificate's private key: its DTLS client accepts a
 * ServerKeyExchange whatever signed it. A party on the network path that saw the browser's
 * certificate (DTLS 1.2 sends it in the clear) could present it and complete the handshake with a
 * key of its own. The server is always the DTLS client (`sdp.ts` refuses offers that would make it
 * the DTLS server), so checking that signature against the presented certificate closes this.
 *
 * The check sits in front of werift's DTLS client handshake handler (`DtlsClient`, exported by
 * werift); a key exchange that fails it never reaches werift, so the handshake never completes.
 * werift is pinned exactly: `webrtc/webrtc-protocol.test.ts` fails if an upgrade bypasses this.
 *
 * The same place keeps a finished handshake finished. A browser sends its flight (ServerHello to
 * ServerHelloDone) again when the client's answer is slow to come, as it is from a loaded media
 * process; a copy that arrives once werift has read the browser's Finished would make werift build
 * and send a new key exchange, then retransmit it for about 33 s waiting for a Finished that never
 * comes, and fail the DTLS transport: the subscriber's media would stop while its session stayed up.
 * Once connected, the client drops every handshake message (DTLS 1.2 in WebRTC has no renegotiation,
 * and the server sends the last flight), and a handler werift began on a copy before the Finished
 * (one waiting for the rest of its flight) sends nothing when it ends after: its flight 5 is not
 * built again. `webrtc/dtls-verify.test.ts` replays such a flight.
 */
import { X509Certificate, verify } from 'node:crypto';
import { DtlsClient } from 'werift';

/** What a werift DTLS client's cipher holds once the server's hello and certificate are read. */
interface CipherState {
  readonly localRandom?: { serialize(): Buffer };
  readonly remoteRandom?: { serialize(): Buffer };
  readonly remoteCertificate?: Buffer;
}

interface Handshake {
  readonly msg_type: number;
  readonly fragment: Buffer;
}

const SERVER_KEY_EXCHANGE = 12;
/** TLS 1.2 HashAlgorithm codes (RFC 5246, 7.4.1.4.1) that may sign a key exchange here. */
const HASHES: Readonly<Record<number, string>> = { 4: 'sha256', 5: 'sha384', 6: 'sha512' };
/** SignatureAlgorithm codes: rsa (1), ecdsa (3). */
const SIGNATURES = new Set([1, 3]);

/**
 * Whether a ServerKeyExchange (ECDHE: curve type, named curve, public key, then hash, signature
 * algorithm and signature) is signed by the key of the certificate the server presented:
 * SIGN(client_random || server_random || ServerECDHParams), RFC 4492 section 5.4.
 */
export function signedByCertificate(cipher: CipherState, fragment: Buffer): boolean {
  const { localRandom, remoteRandom, remoteCertificate } = cipher;
  if (!localRandom || !remoteRandom || !remoteCertificate || fragment.length < 4) return false;
  const paramsEnd = 4 + fragment.readUInt8(3);
  if (fragment.length < paramsEnd + 4) return false;
  const hash = HASHES[fragment.readUInt8(paramsEnd)];
  const signatureAlgorithm = fragment.readUInt8(paramsEnd + 1);
  const signatureLength = fragment.readUInt16BE(paramsEnd + 2);
  const signature = fragment.subarray(paramsEnd + 4);
  if (!hash || !SIGNATURES.has(signatureAlgorithm) || signature.length !== signatureLength) return false;
  const signed = Buffer.concat([localRandom.serialize(), remoteRandom.serialize(), fragment.subarray(0, paramsEnd)]);
  try {
    return verify(hash, signed, new X509Certificate(remoteCertificate).publicKey, signature);
  } catch {
    return false;
  }
}

/** werift's flight 5 (the client's key exchange and Finished), built and sent by `exec`. */
interface ClientFlight {
  exec(): Promise<void>;
}

interface ClientInternals {
  cipher: CipherState;
  /** The flight the server's ServerHello started, set by werift's handler of each ServerHello. */
  flight5: ClientFlight | undefined;
  /** Set by werift once it read the server's Finished. */
  readonly connected: boolean;
  onHandleHandshakes: (assembled: Handshake[]) => Promise<void>;
  /** werift's bounded wait (about 4.5 s), rejecting when the condition never holds. */
  waitForReady(condition: () => boolean): Promise<void>;
}

const CERTIFICATE = 11;

/** The first certificate of a Certificate message: a 3-byte list length, then 3-byte length and DER per certificate. */
function firstCertificate(fragment: Buffer): Buffer | undefined {
  if (fragment.length < 6) return undefined;
  const length = fragment.readUIntBE(3, 3);
  return fragment.length >= 6 + length ? fragment.subarray(6, 6 + length) : undefined;
}

let installed = false;

/**
 * Installs the checks once per process: every werift DTLS client hands the server's handshake
 * messages to werift one at a time, and a key exchange that fails the check is dropped, so the
 * client never sends its own key exchange and the handshake never completes; once the handshake
 * is done, none.
 */
export function installDtlsKeyCheck(): void {
  if (installed) return;
  const prototype = DtlsClient.prototype as unknown as { connect(this: ClientInternals): Promise<void> };
  const connect = prototype.connect;
  prototype.connect = function checkedConnect(this: ClientInternals): Promise<void> {
    const handle = this.onHandleHandshakes;
    let verified: Buffer | undefined;
    // each copy of the server's flight gets a flight 5 of its own: once connected, none is built again
    let flight5: ClientFlight | undefined;
    Object.defineProperty(this, 'flight5', {
      configurable: true,
      enumerable: true,
      get: () => flight5,
      set: (next: ClientFlight | undefined) => {
        if (next) {
          const exec = next.exec.bind(next);
          next.exec = () => (this.connected ? Promise.resolve() : exec());
        }
        flight5 = next;
      },
    });
    this.onHandleHandshakes = async (assembled) => {
      // in order; werift reads each record as it comes, so the hello and the certificate may still
      // be on their way in when the key exchange arrives: it waits for them as werift does
      for (const handshake of assembled) {
        // a copy of a flight already answered: the handshake is over
        if (this.connected) return;
        if (handshake.msg_type === SERVER_KEY_EXCHANGE) {
          await this.waitForReady(() => this.cipher.remoteCertificate !== undefined && this.cipher.remoteRandom !== undefined);
          if (!signedByCertificate(this.cipher, handshake.fragment)) throw new Error('DTLS: the key exchange is not signed by the presented certificate');
          verified = Buffer.from(this.cipher.remoteCertificate!);
        }
        if (handshake.msg_type === CERTIFICATE && verified && !firstCertificate(handshake.fragment)?.equals(verified)) {
          // the certificate whose key signed the exchange is the one whose fingerprint gets checked
          throw new Error('DTLS: the certificate changed after the key exchange');
        }
        await handle([handshake]);
      }
    };
    return connect.call(this);
  };
  installed = true;
}
