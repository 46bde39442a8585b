/**
 * Relay link: the CPU a media node spends to seal and open one packet of a relay link between
 * media nodes (server/src/media/relay/relay-datagram.ts, docs/protocol/relay.md "Datagrams"),
 * against what a packet already costs it in the same run:
 *
 * - relay: `DatagramSealer.seal` at the origin plus `DatagramOpener.open` (replay window included)
 *   at the relaying node, AES-128-GCM under the link's key;
 * - raw AES-128-GCM: node:crypto's cipher and decipher alone on the same packet (the floor of the
 *   relay's framing);
 * - SRTP: werift 0.23.0's `SrtpSession` encrypt plus decrypt in the profile the platform's WebRTC
 *   connections negotiate with browsers (AES-128-CM + HMAC-SHA1-80), the work a subscriber's
 *   packet costs the node (baseline): a relay hop that costs about one SRTP protect and unprotect
 *   costs about one extra subscriber.
 *
 * Per packet of 1,100 bytes (video) and 160 bytes (audio), in this process, on one core: best of
 * five rounds of BENCH_RELAY_PACKETS packets each (default 20,000). One JSON line.
 */
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes } from 'node:crypto';
import { ProtectionProfileAes128CmHmacSha1_80, RtpHeader, SrtpSession } from 'werift';
import { DatagramOpener, DatagramSealer, DatagramType } from '../server/src/media/relay/relay-datagram.ts';
import { printFigure, progress, runBench } from './lib/report.ts';

const BENCH = 'relay-link';
const PACKETS = Number(process.env['BENCH_RELAY_PACKETS'] ?? 20_000);
const ROUNDS = 5;

/** Best (lowest) microseconds per packet of `work` over ROUNDS rounds; `work` handles packet `i`. */
function microsPerPacket(work: (i: number) => void): number {
  for (let i = 0; i < 2000; i++) work(i);
  let best = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < PACKETS; i++) work(i);
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1000 / PACKETS);
  }
  return best;
}

function relay(size: number): number {
  const key = createSecretKey(randomBytes(16));
  const sealer = new DatagramSealer(key, 7);
  const opener = new DatagramOpener(key, 7);
  const packet = randomBytes(size);
  return microsPerPacket(() => {
    const opened = opener.open(Buffer.concat(sealer.seal(DatagramType.rtp, 1, 2, packet)));
    if (!opened.ok) throw new Error(`a relay datagram did not open: ${opened.reason}`);
  });
}

function rawGcm(size: number): number {
  const key = createSecretKey(randomBytes(16));
  const nonce = randomBytes(12);
  const packet = randomBytes(size);
  return microsPerPacket((i) => {
    nonce.writeUInt32BE(i, 8);
    const cipher = createCipheriv('aes-128-gcm', key, nonce);
    const sealed = cipher.update(packet);
    cipher.final();
    const decipher = createDecipheriv('aes-128-gcm', key, nonce);
    decipher.setAuthTag(cipher.getAuthTag());
    decipher.update(sealed);
    decipher.final();
  });
}

function srtp(size: number): number {
  const key = randomBytes(16);
  const salt = randomBytes(14);
  const session = new SrtpSession({
    keys: { localMasterKey: key, localMasterSalt: salt, remoteMasterKey: key, remoteMasterSalt: salt },
    profile: ProtectionProfileAes128CmHmacSha1_80,
  });
  const payload = randomBytes(size - 12);
  return microsPerPacket((i) => {
    const header = new RtpHeader({ payloadType: 96, sequenceNumber: i & 0xffff, timestamp: i * 3000, ssrc: 0x1234 });
    session.decrypt(session.encrypt(payload, header));
  });
}

runBench(BENCH, async () => {
  progress(`seal and open ${PACKETS} packets per round, ${ROUNDS} rounds, per size and method`);
  const video = { relay: relay(1100), raw: rawGcm(1100), srtp: srtp(1100) };
  const audio = { relay: relay(160), raw: rawGcm(160), srtp: srtp(160) };
  printFigure({
    bench: BENCH,
    figure: 'relay seal + open of a 1100-byte packet (baseline: werift SRTP protect + unprotect, AES-128-CM-HMAC-SHA1-80)',
    value: video.relay,
    unit: 'us/packet',
    baseline: video.srtp,
    raw_aes_128_gcm_us: video.raw,
    audio_160_bytes: { relay_us: Number(audio.relay.toFixed(2)), srtp_us: Number(audio.srtp.toFixed(2)), raw_aes_128_gcm_us: Number(audio.raw.toFixed(2)) },
    packets_per_round: PACKETS,
  });
  await Promise.resolve();
});
