/**
 * The werift side of a WebRTC client of the media role in Node (rtc-client.ts): a peer connection
 * whose only candidate is loopback, the codecs the server negotiates, complete offers (werift does
 * not trickle), and the RTP and RTCP shapes the client writes and counts.
 */
import { randomBytes } from 'node:crypto';
import {
  CipherContext, HashAlgorithm, NamedCurveAlgorithm, RTCPeerConnection, SignatureAlgorithm, RTCRtpCodecParameters, RtcpPayloadSpecificFeedback,
  type DtlsKeys, type PeerConfig, type RtcpPacket,
} from 'werift';

export const VP8_PAYLOAD_TYPE = 96;
export const OPUS_PAYLOAD_TYPE = 111;

/** Failure bound of every waiter: generous, tests run on a loaded machine. */
export const WAIT_MS = 20_000;

/** VP8 and Opus only, as the server negotiates (docs/protocol/media.md, "Codecs, key frames and ICE"). */
export function rtcCodecs(): PeerConfig['codecs'] {
  return {
    video: [new RTCRtpCodecParameters({
      mimeType: 'video/VP8', clockRate: 90000, payloadType: VP8_PAYLOAD_TYPE,
      rtcpFeedback: [{ type: 'nack' }, { type: 'nack', parameter: 'pli' }, { type: 'goog-remb' }],
    })],
    audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: OPUS_PAYLOAD_TYPE })],
  };
}

/** A werift peer connection whose only candidate is 127.0.0.1 (werift skips loopback unless told). */
export function createLoopbackPeer(extra: Partial<PeerConfig> = {}): RTCPeerConnection {
  return new RTCPeerConnection({
    codecs: rtcCodecs(),
    iceServers: [],
    iceAdditionalHostAddresses: ['127.0.0.1'],
    iceUseIpv4: false,
    iceUseIpv6: false,
    bundlePolicy: 'max-bundle',
    ...extra,
  });
}

/**
 * A DTLS certificate of its own: werift otherwise gives every peer connection of a process the same
 * one (pass it as `{ dtls: { keys } }`).
 */
export function generateDtlsKeys(): Promise<DtlsKeys> {
  return CipherContext.createSelfSignedCertificateWithKey(
    { signature: SignatureAlgorithm.ecdsa_3, hash: HashAlgorithm.sha256_4 }, NamedCurveAlgorithm.secp256r1_23);
}

/** werift adds a public STUN server even with no ICE servers; unreachable here, it would delay gathering. */
export function clearStun(pc: RTCPeerConnection): void {
  for (const transport of pc.iceTransports) transport.connection.stunServer = undefined;
}

/** Polls `check` until true; rejects after `timeoutMs` (a failure bound, not a delay). */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Sets a fresh local offer and resolves with its SDP once ICE gathering is complete (werift does not trickle). */
export async function gatheredOffer(pc: RTCPeerConnection): Promise<string> {
  const offer = await pc.createOffer();
  clearStun(pc);
  await pc.setLocalDescription(offer);
  clearStun(pc);
  await waitFor(() => pc.iceGatheringState === 'complete', 'ICE gathering');
  const sdp = pc.localDescription?.sdp;
  if (!sdp) throw new Error('no local description');
  return sdp;
}

/** The SHA-256 fingerprint line of an SDP. */
export function fingerprintLine(sdp: string): string {
  const line = sdp.split(/\r?\n/).find((l) => l.startsWith('a=fingerprint:sha-256'));
  if (!line) throw new Error('no sha-256 fingerprint in the SDP');
  return line;
}

/** A payload that looks like VP8 to a packetizer: a payload descriptor (S bit, partition 0), then a frame's bytes. */
export function vp8Payload(size: number, keyFrame = false): Buffer {
  const payload = randomBytes(Math.max(size, 4));
  payload[0] = 0x10;
  // VP8 payload header: lowest bit 0 = key frame, 1 = inter frame
  payload[1] = keyFrame ? payload[1]! & 0xfe : payload[1]! | 0x01;
  return payload;
}

/** Whether an RTCP packet is a picture loss indication. */
export function isPli(packet: RtcpPacket): boolean {
  if (packet.type !== RtcpPayloadSpecificFeedback.type) return false;
  const { feedback } = packet;
  return feedback.count === 1 && 'mediaSsrc' in feedback;
}

/** The SSRC a picture loss indication names, or undefined for any other packet. */
export function pliMediaSsrc(packet: RtcpPacket): number | undefined {
  if (!isPli(packet) || packet.type !== RtcpPayloadSpecificFeedback.type) return undefined;
  const { feedback } = packet;
  return 'mediaSsrc' in feedback ? feedback.mediaSsrc : undefined;
}
