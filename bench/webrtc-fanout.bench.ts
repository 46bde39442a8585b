/**
 * WebRTC fan-out: one publisher of a camera-like load (VP8-looking video, ~1100-byte RTP packets at
 * 170 packets/s, about 1.5 Mbit/s, plus Opus-sized audio, 160 bytes at 50 packets/s) forwarded to
 * 1, 10 and 50 subscribers by one media process. Measured in the same run, with the same load and
 * pacing, beside two forwarders with no WebRTC session logic, all on loopback:
 *
 * - the platform's media role (`rtc serve` from dist/): each client is a joined media session
 *   (grant, proof of possession, sealed control) with a werift peer connection negotiated over
 *   `rtc_offer` (server/src/main/client/media/rtc-client.ts); the server receives SRTP, checks each packet's
 *   m-line against the session's publications and each subscriber's grant, and sends it again over
 *   every subscriber's own DTLS-SRTP connection (docs/protocol/media.md, "WebRTC media"), paced by
 *   its estimate of that subscriber's downlink. As browsers do, the subscribers send transport-wide
 *   congestion control feedback (which that estimate grows on) and the publisher answers the
 *   server's key frame requests (a subscriber's video starts on a key frame);
 * - the baseline: the same RTP packets fanned out with no WebRTC session logic at all: a plain
 *   UDP forwarder (node:dgram) that sends every packet it gets from the publisher to N subscriber
 *   sockets; no ICE, no DTLS, no SRTP, no grant. This file is that forwarder (`baseline` argument);
 * - the SRTP floor: the same fan-out with the cryptography every WebRTC SFU must do and nothing
 *   else: each packet from the publisher is unprotected once with the publisher's SRTP session and
 *   protected again with each subscriber's own session before it goes to that subscriber's socket.
 *   werift's SrtpSession, as the platform uses it, in the SRTP profile the platform's connections
 *   of the same run negotiated; the keys are random per session and sent in the registration
 *   datagram (no ICE, no DTLS handshake, no RTCP, no grant). This file with `srtp-baseline`.
 *
 * The three loads are paced the same way. The three forwarders are connected at once and measured in
 * turn, ROUNDS times (the order rotates each round), so that a machine whose speed drifts over the
 * minutes weighs on all three alike: before each window the load runs until every subscriber
 * received both streams and two seconds in a row delivered the offered load, then MEASURE_SECONDS.
 * Figures, over the windows of all rounds together: RTP packets received by all subscribers
 * together per second (the offered load is 220 × N), and the forwarder's CPU per forwarded packet
 * (/proc, user + system).
 * The load generator (publisher and subscribers, werift SRTP in JavaScript) runs in this process;
 * the SRTP floor's subscribers count only the packets that unprotect with their keys.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ProtectionProfileAeadAes128Gcm, ProtectionProfileAes128CmHmacSha1_80, type SrtpProfile } from 'werift';
import { vp8Payload, waitFor } from '../server/src/main/client/media/loopback-peer.ts';
import { RtcClient } from '../server/src/main/client/media/rtc-client.ts';
import { feedbackPeerConfig, sendTransportFeedback } from '../server/src/main/client/media/transport-feedback.ts';
import { postJson } from './lib/http.ts';
import type { WireCredentials } from '../server/src/main/client/media/wire-client.ts';
import { basicAuthorization, startBenchFileServer, startMediaAndBaseline, type BenchCredential } from './lib/platform.ts';
import { readCpuSeconds } from './lib/proc-stats.ts';
import type { ServerProcess } from './lib/process.ts';
import { printFigure, progress } from './lib/report.ts';
import { intSetting } from './lib/settings.ts';
import { AUDIO, SETTLE_SECONDS, VIDEO, joinCameraPublisher, settle, startCameraLoad, type CameraLoad } from './lib/camera-load.ts';
import {
  baselineFanout, isSrtpProfile, serveBaseline, serveSrtpFloor, srtpFloorFanout, type Fanout,
} from './lib/udp-forwarders.ts';

const BENCH = 'webrtc-fanout';
const SELF = fileURLToPath(import.meta.url);
const OFFERED_PER_SUBSCRIBER = VIDEO.perSecond + AUDIO.perSecond;
/** Subscriber counts; BENCH_WEBRTC_SUBSCRIBERS (comma-separated, from 1, 10, 50) runs a subset. */
const SUBSCRIBERS = (process.env['BENCH_WEBRTC_SUBSCRIBERS'] ?? '1,10,50').split(',').map(Number).filter((n) => n === 1 || n === 10 || n === 50);
const MEASURE_SECONDS = intSetting('BENCH_WEBRTC_SECONDS', 3, 1, 60);
/** Windows per forwarder, taken in turn with the other two (BENCH_WEBRTC_ROUNDS). */
const ROUNDS = intSetting('BENCH_WEBRTC_ROUNDS', 3, 1, 20);
const SRTP_PROFILE_NAMES: Readonly<Record<SrtpProfile, string>> = {
  [ProtectionProfileAes128CmHmacSha1_80]: 'SRTP_AES128_CM_HMAC_SHA1_80',
  [ProtectionProfileAeadAes128Gcm]: 'SRTP_AEAD_AES_128_GCM',
};

/** What one window measured. */
interface Window {
  readonly packets: number;
  readonly cpuSeconds: number;
  readonly clientCpuSeconds: number;
  readonly seconds: number;
}

interface Measured {
  readonly packetsPerSecond: number;
  readonly cpuMicrosPerPacket: number;
  readonly serverLoad: number;
  readonly clientLoad: number;
}

/** The camera-like load over a fan-out: the same two payloads sent again and again. */
function cameraLoad(fanout: Fanout): CameraLoad {
  const video = vp8Payload(VIDEO.bytes);
  const audio = randomBytes(AUDIO.bytes);
  return { sendVideo: () => fanout.sendVideo(video), sendAudio: () => fanout.sendAudio(audio), received: () => fanout.received() };
}

async function measure(fanout: Fanout, pid: number, offered: number, what: string): Promise<Window> {
  const stop = startCameraLoad(cameraLoad(fanout));
  try {
    await waitFor(() => fanout.flowing(), 'both streams at every subscriber', 30_000);
    if (!await settle(cameraLoad(fanout), offered)) progress(`${what}: less than the offered load gets through after ${SETTLE_SECONDS} s; measuring what does`);
    const before = { received: fanout.received(), cpu: readCpuSeconds(pid), client: process.cpuUsage(), at: performance.now() };
    await new Promise((resolve) => setTimeout(resolve, MEASURE_SECONDS * 1000));
    const client = process.cpuUsage(before.client);
    return {
      packets: fanout.received() - before.received, cpuSeconds: readCpuSeconds(pid) - before.cpu,
      clientCpuSeconds: (client.user + client.system) / 1e6, seconds: (performance.now() - before.at) / 1000,
    };
  } finally {
    await stop();
  }
}

/** The windows of one forwarder together. */
function summed(windows: readonly Window[]): Measured {
  const sum = (pick: (w: Window) => number): number => windows.reduce((total, w) => total + pick(w), 0);
  const packets = sum((w) => w.packets);
  const seconds = sum((w) => w.seconds);
  const cpu = sum((w) => w.cpuSeconds);
  return {
    packetsPerSecond: packets / seconds, cpuMicrosPerPacket: packets === 0 ? Number.NaN : (cpu * 1e6) / packets,
    serverLoad: cpu / seconds, clientLoad: sum((w) => w.clientCpuSeconds) / seconds,
  };
}

/** CPU per packet of one window, in µs. */
function micros(w: Window): number {
  return w.packets === 0 ? Number.NaN : (w.cpuSeconds * 1e6) / w.packets;
}

async function issue(api: string, cred: BenchCredential, body: Record<string, unknown>): Promise<{ media: WireCredentials }> {
  const res = await postJson(`${api}/v1/rtc/tokens`, JSON.stringify(body), { authorization: basicAuthorization(cred.appId, cred.appSecret) });
  if (res.status !== 200) throw new Error(`token issuance: ${res.status} ${res.text}`);
  return JSON.parse(res.text) as { media: WireCredentials };
}

/** The SRTP profile the server and the clients negotiated in DTLS (one for all of them). */
function negotiatedProfile(clients: readonly RtcClient[]): SrtpProfile {
  const profiles = new Set(clients.flatMap((c) => c.pc.dtlsTransports.map((t) => t.srtp.config.profile)));
  const [profile] = profiles;
  if (profiles.size !== 1 || !isSrtpProfile(profile)) throw new Error(`the platform's connections negotiated SRTP profiles ${[...profiles].join(', ')}`);
  return profile;
}

async function platformFanout(
  mediaUrl: string, api: string, cred: BenchCredential, subscribers: number,
): Promise<Fanout & { readonly srtpProfile: SrtpProfile }> {
  const room = `webrtc-${subscribers}-${randomBytes(4).toString('hex')}`;
  const clients: RtcClient[] = [];
  const stops: (() => void)[] = [];
  const closeAll = async (): Promise<void> => {
    for (const stop of stops) stop();
    for (const c of clients) await c.close();
  };
  try {
    const publisher = await joinCameraPublisher(mediaUrl, await issue(api, cred, {
      room_id: room, user_id: 'publisher', role: 'speaker', publish_streams: [VIDEO.streamId, AUDIO.streamId],
    }));
    clients.push(publisher);
    // the rounds outlast the 45 s a silent media session is kept
    stops.push(publisher.keepAlive());
    const subs: RtcClient[] = [];
    for (let i = 0; i < subscribers; i++) {
      const sub = await RtcClient.join(mediaUrl, await issue(api, cred, {
        room_id: room, user_id: `sub-${i}`, role: 'audience', subscribe_room: true,
      }), { keepPayloads: false, peer: feedbackPeerConfig() });
      clients.push(sub);
      subs.push(sub);
      stops.push(sub.keepAlive());
      const got = await sub.negotiate([
        { streamId: VIDEO.streamId, kind: 'video', direction: 'recv' }, { streamId: AUDIO.streamId, kind: 'audio', direction: 'recv' },
      ]);
      if (got.refused.length > 0) throw new Error(`subscriber ${i}: m-lines refused: ${got.refused.join(', ')}`);
    }
    for (const sub of subs) await sub.waitConnected(30_000);
    for (const sub of subs) stops.push(sendTransportFeedback(sub));
    const count = (sub: RtcClient): number => sub.receivedCount(VIDEO.streamId) + sub.receivedCount(AUDIO.streamId);
    // the server starts a subscriber's video on a key frame and asks the publisher for one (PLI):
    // the next video packet answers it, as a camera's encoder would
    const keyFrame = vp8Payload(VIDEO.bytes, true);
    let answeredPlis = 0;
    return {
      srtpProfile: negotiatedProfile(clients),
      sendVideo: (payload) => {
        const plis = publisher.pliReceived(VIDEO.streamId);
        publisher.sendRtp(VIDEO.streamId, plis > answeredPlis ? keyFrame : payload);
        answeredPlis = plis;
      },
      sendAudio: (payload) => publisher.sendRtp(AUDIO.streamId, payload),
      received: () => subs.reduce((sum, sub) => sum + count(sub), 0),
      flowing: () => subs.every((sub) => sub.receivedCount(VIDEO.streamId) > 0 && sub.receivedCount(AUDIO.streamId) > 0),
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-webrtc-fanout-'));
  const started: ServerProcess[] = [];
  try {
    progress('starting the platform (api, token, media), the plain UDP forwarder and the SRTP floor forwarder...');
    const { platform, baseline, cred } = await startMediaAndBaseline(work, SELF, started);
    const srtpFloor = await startBenchFileServer(work, SELF, 'srtp-baseline');
    started.push(srtpFloor);
    const api = platform.urls['api']!;

    for (const n of SUBSCRIBERS) {
      const offered = OFFERED_PER_SUBSCRIBER * n;
      progress(`${n} subscriber(s): joining and negotiating...`);
      const fanouts: Fanout[] = [];
      const windows: Window[][] = [[], [], []];
      let profile: SrtpProfile;
      try {
        const p = await platformFanout(platform.urls['media']!, api, cred, n);
        fanouts.push(p);
        profile = p.srtpProfile;
        fanouts.push(await baselineFanout(baseline.urls['baseline']!, n));
        fanouts.push(await srtpFloorFanout(srtpFloor.urls['srtp-baseline']!, n, profile));
        const forwarders = [
          { pid: platform.pid, what: 'platform' }, { pid: baseline.pid, what: 'plain forwarder' }, { pid: srtpFloor.pid, what: 'SRTP floor' },
        ];
        for (let round = 0; round < ROUNDS; round++) {
          for (let k = 0; k < forwarders.length; k++) {
            const i = (round + k) % forwarders.length;
            const { pid, what } = forwarders[i]!;
            windows[i]!.push(await measure(fanouts[i]!, pid, offered, `${n} subscriber(s), ${what}, round ${round + 1}`));
          }
        }
      } finally {
        for (const fanout of fanouts) await fanout.close();
      }
      const [platformResult, baselineResult, floorResult] = windows.map(summed) as [Measured, Measured, Measured];
      const roundRatios = windows[0]!.map((w, round) => Number((micros(w) / micros(windows[2]![round]!)).toFixed(3)));
      const cores = (m: Measured): string => `${m.serverLoad.toFixed(2)} / ${m.clientLoad.toFixed(2)}`;
      progress(`${n} subscriber(s): ${Math.round(platformResult.packetsPerSecond)} RTP packets/s forwarded of ${offered} offered ` +
        `(SRTP floor ${Math.round(floorResult.packetsPerSecond)}, plain ${Math.round(baselineResult.packetsPerSecond)}), ` +
        `server CPU ${platformResult.cpuMicrosPerPacket.toFixed(2)} us/packet (SRTP floor ${floorResult.cpuMicrosPerPacket.toFixed(2)}, ` +
        `plain ${baselineResult.cpuMicrosPerPacket.toFixed(2)}), cores busy server / client: ${cores(platformResult)} ` +
        `(SRTP floor ${cores(floorResult)}, plain ${cores(baselineResult)}), SRTP profile ${SRTP_PROFILE_NAMES[profile]}`);
      printFigure({
        bench: BENCH, figure: `rtp_packets_per_s_${n}_subs`, value: platformResult.packetsPerSecond, unit: 'packets/s',
        baseline: baselineResult.packetsPerSecond, offered, load: `${VIDEO.perSecond} video + ${AUDIO.perSecond} audio packets/s`,
      });
      printFigure({
        bench: BENCH, figure: `server_cpu_per_packet_${n}_subs`, value: platformResult.cpuMicrosPerPacket, unit: 'us',
        baseline: baselineResult.cpuMicrosPerPacket,
      });
      printFigure({
        bench: BENCH, figure: `server_cpu_per_packet_${n}_subs_vs_srtp_floor`, value: platformResult.cpuMicrosPerPacket, unit: 'us',
        baseline: floorResult.cpuMicrosPerPacket, srtp_profile: SRTP_PROFILE_NAMES[profile], rounds: ROUNDS, round_ratios: roundRatios,
      });
      printFigure({
        bench: BENCH, figure: `srtp_floor_cpu_per_packet_${n}_subs`, value: floorResult.cpuMicrosPerPacket, unit: 'us',
        baseline: baselineResult.cpuMicrosPerPacket, packets_per_s: floorResult.packetsPerSecond, srtp_profile: SRTP_PROFILE_NAMES[profile],
      });
    }
  } finally {
    for (const server of started) await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'baseline') await serveBaseline();
else if (process.argv[2] === 'srtp-baseline') await serveSrtpFloor();
else await main();
