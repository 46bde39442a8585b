/**
 * `rtc load-test` (docs/reference/cli.md, "Load test"): synthetic publishers and subscribers that
 * each get a token from the token API, as a customer server does, join the room's media session
 * (docs/protocol/media.md: handshake with proof of possession, then WebRTC with werift), send
 * synthetic VP8 and Opus RTP or receive everything published, and report what they measured.
 */
import { randomBytes } from 'node:crypto';
import type { TokenClient } from '@rtc/server-sdk';
import type { TokenRequest, TokenResponse } from '@rtc/protocol';
import type { PeerConfig } from 'werift';
import { parseVp8 } from '../../media/rtp/vp8.ts';
import { viaAppClient } from './app-client.ts';
import { OPUS_STAMP_OFFSET, VP8_FRAME_STAMP_OFFSET, readSendTime } from './load-test-delay.ts';
import type { ClientIO, InterruptSignal } from './common.ts';
import { ApiResponseError, UsageError } from './http.ts';
import {
  SequenceTracker, newCounters, parseBitrate, recordKeyFrame, parseDurationMs, progressLine, snapshot, summarize, summaryLines,
  type LoadRole, type ParticipantCounters, type ParticipantResult, type Snapshot,
} from './load-test-report.ts';
import { generateDtlsKeys } from './media/loopback-peer.ts';
import { RtcClient, type RtcTrackSpec } from './media/rtc-client.ts';
import {
  AUDIO_PACKET_MS, VIDEO_FPS, VIDEO_TIMESTAMP_STEP, Vp8FrameSource, opusPayload, videoLayers, type VideoLayer,
} from './media/synthetic-media.ts';
import { feedbackPeerConfig, sendTransportFeedback } from './media/transport-feedback.ts';

/** Joins in flight at once: DTLS handshakes cost CPU on both ends. */
const JOIN_CONCURRENCY = 10;
/** From the token request to a connected peer connection. */
const JOIN_TIMEOUT_MS = 30_000;
/** A subscriber's offer carries at most 40 tracks (docs/protocol/media.md, section 10.1). */
const MAX_TRACKS = 40;
/** Tokens without `ttl_seconds` last 600 s (docs/reference/token-api.md); longer runs ask for more, up to 3600. */
const DEFAULT_TTL_SECONDS = 600;
const MAX_TTL_SECONDS = 3600;
const SEND_TICK_MS = 5;

export interface LoadTestSettings {
  readonly room: string;
  readonly publishers: number;
  readonly subscribers: number;
  readonly durationMs: number;
  readonly videoBps: number;
  readonly audio: boolean;
  readonly simulcast: boolean;
  readonly json: boolean;
}

type Values = Record<string, string | boolean | undefined>;

function count(values: Values, flag: string, fallback: number): number {
  const text = values[flag];
  if (typeof text !== 'string') return fallback;
  if (!/^\d+$/.test(text)) throw new UsageError(`load-test: --${flag} takes a whole number`);
  return Number(text);
}

/** The flags' values checked (UsageError naming the flag), before anything is sent. */
export function loadTestSettings(values: Values): LoadTestSettings {
  const str = (flag: string): string | undefined => (typeof values[flag] === 'string' ? values[flag] : undefined);
  const durationText = str('duration') ?? '30s';
  const durationMs = parseDurationMs(durationText);
  if (durationMs === undefined || durationMs < 1000) throw new UsageError('load-test: --duration takes a time of 1s or more, e.g. 30s, 2m');
  const videoBps = parseBitrate(str('video-bitrate') ?? '1M');
  if (videoBps === undefined || (videoBps !== 0 && videoBps < 30_000) || videoBps > 50_000_000) {
    throw new UsageError('load-test: --video-bitrate takes bits per second from 30k to 50M (e.g. 800k, 1.5M), or 0 for no video');
  }
  const audioText = str('audio') ?? 'on';
  if (audioText !== 'on' && audioText !== 'off') throw new UsageError('load-test: --audio takes on or off');
  const audio = audioText === 'on';
  const publishers = count(values, 'publishers', 1);
  const subscribers = count(values, 'subscribers', 1);
  if (publishers + subscribers === 0) throw new UsageError('load-test: no participants: give --publishers or --subscribers');
  if (publishers > 0 && videoBps === 0 && !audio) throw new UsageError('load-test: publishers with --video-bitrate 0 and --audio off send nothing');
  const perPublisher = (videoBps > 0 ? 1 : 0) + (audio ? 1 : 0);
  if (subscribers > 0 && publishers * perPublisher > MAX_TRACKS) {
    throw new UsageError(`load-test: a subscriber receives at most ${MAX_TRACKS} streams: at most ${Math.floor(MAX_TRACKS / perPublisher)} publishers of ${perPublisher === 2 ? 'video and audio' : 'one stream'}`);
  }
  if (publishers + subscribers > 1000) throw new UsageError('load-test: at most 1000 participants');
  const room = str('room') ?? `load-test-${randomBytes(4).toString('hex')}`;
  return {
    room, publishers, subscribers, durationMs, videoBps, audio, simulcast: values['simulcast'] === true && videoBps > 0, json: values['json'] === true,
  };
}

/** Publisher i publishes video as stream 2i+1 and audio as 2i+2: stream ids are room-wide (docs/protocol/media.md, section 10.4). */
const videoStream = (i: number): number => 2 * i + 1;
const audioStream = (i: number): number => 2 * i + 2;

interface Participant {
  readonly name: string;
  readonly role: LoadRole;
  readonly index: number;
  readonly counters: ParticipantCounters;
  joinMs: number | undefined;
  node: string | undefined;
  failure: string | undefined;
  dropped: string | undefined;
  client: RtcClient | undefined;
  readonly stops: (() => void)[];
}

/** A layer being sent: its frame source and the picture loss indications already answered with a key frame. */
interface LayerSender {
  readonly layer: VideoLayer;
  readonly source: Vp8FrameSource;
  answeredPlis: number;
}

/** The id the media node gave a joined participant. */
function participantIdOf(p: Participant): string | undefined {
  const id = p.client?.wire.joined['participant_id'];
  return p.joinMs !== undefined && typeof id === 'string' ? id : undefined;
}

function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0] ?? message;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms / 1000} s ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The media endpoint a token names: `wss` when the platform was reached over https (docs/protocol/media.md, section 2). */
function mediaUrlOf(token: TokenResponse, platformUrl: string): string {
  const secure = new URL(platformUrl).protocol === 'https:';
  const host = token.media.sfu_host.includes(':') ? `[${token.media.sfu_host}]` : token.media.sfu_host;
  return `${secure ? 'wss' : 'ws'}://${host}:${token.media.sfu_port}`;
}

/** werift gathers no loopback candidate unless told; a remote media node needs the host's own addresses. */
function icePeerConfig(token: TokenResponse): Partial<PeerConfig> {
  const loopback = /^(127\.|localhost$|::1$)/.test(token.media.sfu_host);
  return loopback ? {} : { iceUseIpv4: true, iceAdditionalHostAddresses: [] };
}

/**
 * Runs the load test with the token API's client of the other app commands (--url, --app-id,
 * --app-secret or their variables); resolves with the exit code.
 */
export async function runLoadTest(settings: LoadTestSettings, io: ClientIO, client: TokenClient): Promise<number> {
  const platformUrl = client.baseUrl;
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  const participants: Participant[] = [
    ...Array.from({ length: settings.publishers }, (_, i): Participant => ({
      name: `pub-${i}`, role: 'publisher', index: i, counters: newCounters(), joinMs: undefined, node: undefined, failure: undefined, dropped: undefined,
      client: undefined, stops: [],
    })),
    ...Array.from({ length: settings.subscribers }, (_, i): Participant => ({
      name: `sub-${i}`, role: 'subscriber', index: i, counters: newCounters(), joinMs: undefined, node: undefined, failure: undefined, dropped: undefined,
      client: undefined, stops: [],
    })),
  ];

  let stopping = false;
  let interrupted: InterruptSignal | undefined;
  let leaving = false;
  let fatal: ApiResponseError | undefined;
  let wake: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const stop = (): void => {
    stopping = true;
    wake();
  };
  const offSignal = io.onSignal((signal) => {
    // a second signal does not wait for the sessions to leave
    if (interrupted !== undefined) io.exit(128 + (signal === 'SIGINT' ? 2 : 15));
    interrupted = signal;
    stop();
  });

  const ttl = Math.ceil(settings.durationMs / 1000) + JOIN_TIMEOUT_MS / 1000 + 60;
  const tokenRequest = (p: Participant): TokenRequest => {
    const streams = [...(settings.videoBps > 0 ? [videoStream(p.index)] : []), ...(settings.audio ? [audioStream(p.index)] : [])];
    return {
      room_id: settings.room, user_id: `load-test-${p.name}`,
      ...(p.role === 'publisher' ? { role: 'speaker', publish_streams: streams } : { role: 'audience', subscribe_room: true }),
      ...(ttl > DEFAULT_TTL_SECONDS ? { ttl_seconds: Math.min(MAX_TTL_SECONDS, ttl) } : {}),
    };
  };
  const receiveSpecs: RtcTrackSpec[] = [];
  for (let i = 0; i < settings.publishers; i++) {
    if (settings.videoBps > 0) receiveSpecs.push({ streamId: videoStream(i), kind: 'video', direction: 'recv' });
    if (settings.audio) receiveSpecs.push({ streamId: audioStream(i), kind: 'audio', direction: 'recv' });
  }
  const layers = videoLayers(settings.videoBps, settings.simulcast);

  const join = async (p: Participant): Promise<void> => {
    try {
      await joinSteps(p);
    } catch (err) {
      // a join that fails after its timeout leaves here: the attempt is over
      if (p.failure !== undefined) await leave(p);
      throw err;
    }
  };

  const joinSteps = async (p: Participant): Promise<void> => {
    const began = performance.now();
    const token = await viaAppClient(client, (c) => c.issue(tokenRequest(p)));
    p.node = `${token.media.sfu_host}:${token.media.sfu_port}`;
    const keys = await generateDtlsKeys();
    const counters = p.counters;
    const rtc = await RtcClient.join(mediaUrlOf(token, platformUrl), token, {
      keepPayloads: false,
      peer: { ...feedbackPeerConfig({ simulcast: settings.simulcast }), ...icePeerConfig(token), dtls: { keys } },
      onRtp: (streamId, packet) => {
        counters.packets += 1;
        counters.bytes += packet.payload.length;
        const key = `${streamId}:${packet.header.ssrc}`;
        let tracker = counters.sequences.get(key);
        if (!tracker) counters.sequences.set(key, (tracker = new SequenceTracker()));
        tracker.record(packet.header.sequenceNumber);
        if (streamId % 2 === 1 && packet.header.marker && packet.payload.length > 0) counters.videoFrames += 1;
        if (p.role !== 'subscriber') return;
        let sentAt: number | undefined;
        if (streamId % 2 === 0) sentAt = readSendTime(packet.payload, OPUS_STAMP_OFFSET);
        else {
          const vp8 = parseVp8(packet.payload);
          // the size a received key frame announces tells the layer the server forwards
          if (vp8?.keyFrame && vp8.width > 0) recordKeyFrame(counters, streamId, { width: vp8.width, height: vp8.height });
          // a frame's send time is in its first packet
          if (vp8?.startOfPartition && vp8.partitionIndex === 0) sentAt = readSendTime(packet.payload, vp8.headerBytes + VP8_FRAME_STAMP_OFFSET);
        }
        if (sentAt !== undefined && !leaving) counters.delays.record(performance.now() - sentAt);
      },
    });
    p.client = rtc;
    if (p.failure !== undefined) {
      await leave(p);
      return;
    }
    void rtc.closed().then((info) => {
      if (!leaving && p.joinMs !== undefined) p.dropped ??= `media session closed: ${info.code}${info.reason ? ` ${info.reason}` : ''}`;
    });
    rtc.pc.connectionStateChange.subscribe((state) => {
      if (!leaving && p.joinMs !== undefined && state === 'failed') p.dropped ??= 'peer connection failed';
    });
    p.stops.push(rtc.keepAlive());
    let specs: RtcTrackSpec[];
    if (p.role === 'publisher') {
      specs = [];
      if (settings.videoBps > 0) {
        specs.push({ streamId: videoStream(p.index), kind: 'video', direction: 'send', ...(settings.simulcast ? { rids: layers.map((l) => l.rid!) } : {}) });
      }
      if (settings.audio) specs.push({ streamId: audioStream(p.index), kind: 'audio', direction: 'send' });
      for (const spec of specs) {
        const reply = await rtc.publish(spec.streamId, spec.kind);
        if (reply.type !== 'published') throw new Error(`publish of stream ${spec.streamId} refused: ${String(reply['code'])} ${String(reply['message'] ?? '')}`.trim());
      }
    } else {
      specs = receiveSpecs;
    }
    // with no publisher there is nothing to receive: the joined session is the whole join
    if (specs.length > 0) {
      const negotiated = await rtc.negotiate(specs);
      if (negotiated.refused.length > 0) throw new Error(`the server refused m-lines ${negotiated.refused.join(', ')}`);
      await rtc.waitConnected(JOIN_TIMEOUT_MS);
    }
    // a join that ended after its timeout stays failed, and leaves
    if (p.failure !== undefined) {
      await leave(p);
      return;
    }
    if (p.role === 'subscriber' && specs.length > 0) p.stops.push(sendTransportFeedback(rtc));
    p.joinMs = performance.now() - began;
  };

  const attempt = async (p: Participant): Promise<void> => {
    try {
      await withTimeout(join(p), JOIN_TIMEOUT_MS, 'joining');
    } catch (err) {
      p.failure = reasonOf(err);
      // a credential the token API refuses fails every join alike: stop at the first
      if (err instanceof ApiResponseError && (err.status === 401 || err.status === 403)) {
        fatal ??= err;
        stop();
      }
    }
    if (p.joinMs === undefined) await leave(p);
    else if (stopping) await leave(p);
  };

  const leave = async (p: Participant): Promise<void> => {
    for (const s of p.stops.splice(0)) s();
    const rtc = p.client;
    if (!rtc) return;
    try {
      if (rtc.closeInfo === undefined) rtc.wire.sendControl({ type: 'leave' });
    } catch {
      // the socket is gone already
    }
    await rtc.close().catch(() => undefined);
  };

  // progress on standard error: in place on a terminal, a line every few seconds otherwise
  const { tty } = io.progress;
  let last = { at: performance.now(), out: 0, in: 0 };
  const total = (role: LoadRole): number => participants.reduce((sum, p) => sum + (p.role === role ? p.counters.bytes : 0), 0);
  const report = (): void => {
    const now = performance.now();
    const out = total('publisher');
    const inBytes = total('subscriber');
    const seconds = (now - last.at) / 1000;
    const line = progressLine({
      joined: participants.filter((p) => p.joinMs !== undefined).length, total: participants.length,
      failed: participants.filter((p) => p.failure !== undefined).length, elapsedSeconds: (now - started) / 1000,
      outBps: seconds > 0 ? ((out - last.out) * 8) / seconds : 0, inBps: seconds > 0 ? ((inBytes - last.in) * 8) / seconds : 0,
    });
    last = { at: now, out, in: inBytes };
    io.progress.write(tty ? `\r\x1b[2K${line}` : `${line}\n`);
  };
  const progress = setInterval(report, tty ? 1000 : 5000);

  // the publishers' media, paced against the clock
  const sending = new Map<Participant, { videoSent: number; audioSent: number; since: number; senders: LayerSender[] }>();
  const sendTick = setInterval(() => {
    const now = performance.now();
    for (const p of participants) {
      const rtc = p.client;
      if (p.role !== 'publisher' || p.joinMs === undefined || !rtc || rtc.closeInfo !== undefined) continue;
      let state = sending.get(p);
      if (!state) {
        state = { videoSent: 0, audioSent: 0, since: now, senders: layers.map((layer) => ({ layer, source: new Vp8FrameSource(layer), answeredPlis: -1 })) };
        sending.set(p, state);
      }
      const elapsed = now - state.since;
      if (settings.videoBps > 0) {
        const due = Math.floor((elapsed * VIDEO_FPS) / 1000) + 1;
        // a process starved of CPU skips frames rather than sending a burst
        if (due - state.videoSent > VIDEO_FPS) state.videoSent = due - 1;
        for (; state.videoSent < due; state.videoSent++) sendFrame(p, rtc, state.senders);
      }
      if (settings.audio) {
        const due = Math.floor(elapsed / AUDIO_PACKET_MS) + 1;
        if (due - state.audioSent > 1000 / AUDIO_PACKET_MS) state.audioSent = due - 1;
        for (; state.audioSent < due; state.audioSent++) {
          const payload = opusPayload(performance.now());
          rtc.sendRtp(audioStream(p.index), payload);
          p.counters.packets += 1;
          p.counters.bytes += payload.length;
        }
      }
    }
  }, SEND_TICK_MS);

  const sendFrame = (p: Participant, rtc: RtcClient, senders: LayerSender[]): void => {
    const stream = videoStream(p.index);
    for (const sender of senders) {
      const rid = sender.layer.rid;
      // the first frame, and the next after the server asked for one (a subscriber starts or switches layer), is a key frame
      const plis = rid === undefined ? rtc.pliReceived(stream) : rtc.layerPliReceived(stream, rid);
      const keyFrame = plis !== sender.answeredPlis;
      sender.answeredPlis = plis;
      const payloads = sender.source.next(keyFrame, performance.now());
      payloads.forEach((payload, i) => {
        const marker = i === payloads.length - 1;
        const step = i === 0 ? VIDEO_TIMESTAMP_STEP : 0;
        if (rid === undefined) rtc.sendRtp(stream, payload, marker, step);
        else rtc.sendLayerRtp(stream, rid, payload, marker, step);
        p.counters.packets += 1;
        p.counters.bytes += payload.length;
      });
    }
    p.counters.videoFrames += 1;
  };

  // joins, JOIN_CONCURRENCY at a time
  const queue = [...participants];
  const workers = Array.from({ length: Math.min(JOIN_CONCURRENCY, queue.length) }, async () => {
    for (let p = queue.shift(); p !== undefined && !stopping; p = queue.shift()) await attempt(p);
  });
  await Promise.race([Promise.all(workers), stopped]);
  for (const p of queue.splice(0)) p.failure = 'not started: the run was stopped';

  // the measurement window: from the end of the joins for --duration, or to the interruption
  const results = (): ParticipantResult[] => participants.map((p) => ({
    name: p.name, role: p.role, participantId: participantIdOf(p), node: p.node, joinMs: p.joinMs, failure: p.failure, dropped: p.dropped,
    counters: p.counters,
  }));
  const windowStart = performance.now();
  const before: Snapshot = snapshot(results());
  // delays are of the window: not of the joins' start-up
  for (const p of participants) p.counters.delays.clear();
  // with nobody joined there is nothing to measure
  if (!stopping && participants.some((p) => p.joinMs !== undefined)) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([stopped, new Promise<void>((resolve) => {
      timer = setTimeout(resolve, settings.durationMs);
    })]);
    clearTimeout(timer);
  }
  const windowSeconds = (performance.now() - windowStart) / 1000;
  // the figures are taken before leaving: a leave is not part of the measured load
  const frozen = results().map((r) => ({
    ...r, counters: { ...r.counters, sequences: new Map(r.counters.sequences), keyFrames: new Map([...r.counters.keyFrames].map(([k, v]) => [k, [...v]])) },
  }));
  const cpu = process.cpuUsage(cpuStart);
  const runSeconds = (performance.now() - started) / 1000;
  leaving = true;
  clearInterval(sendTick);
  clearInterval(progress);
  if (tty) io.progress.write('\r\x1b[2K');
  else report();
  // joins still in flight after an interruption leave when they end (attempt), the others now
  await Promise.all(participants.filter((p) => p.joinMs !== undefined).map(leave));
  await Promise.all(workers);
  offSignal();
  if (fatal) throw fatal;

  const summary = summarize({
    room: settings.room, url: platformUrl, results: frozen, before, windowSeconds, interrupted: interrupted !== undefined, cpu, runSeconds, layers,
  });
  if (settings.json) io.out(JSON.stringify(summary, null, 2));
  else for (const line of summaryLines(summary)) io.out(line);
  if (summary.failed_joins.length > 0) {
    io.err(`rtc: load-test: ${summary.failed_joins.length} of ${participants.length} participants failed to join`);
    return 1;
  }
  // as a shell reports a command a signal ended: 128 + the signal's number
  return interrupted === undefined ? 0 : 128 + (interrupted === 'SIGINT' ? 2 : 15);
}
