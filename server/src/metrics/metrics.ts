import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ICE_OUTCOMES, refusedInput, type MediaStats, type Traffic } from './media-stats.ts';
import { replaceEventLoopLag } from './event-loop.ts';

/**
 * The Prometheus metrics of one process (docs/operations/metrics.md). One instance per process,
 * made by the composition root and handed to what records: no global registry, so several
 * platforms in one process (tests) keep their counts apart. No label ever carries a secret, a user,
 * an App ID, a project, a room, a grant or an address: labels take values from closed lists only.
 */
export interface PlatformMetrics {
  readonly registry: Registry;
  readonly tokens: TokenMetrics;
  /** Counts one webhook delivery attempt by what became of it. */
  recordWebhookDelivery(outcome: WebhookOutcome): void;
  /** Reads the media role's gauges and frame counts at each scrape. */
  watchMedia(source: MediaMetricsSource): void;
  /** Reads the signaling role's open streams at each scrape. */
  watchSignaling(source: SignalingMetricsSource): void;
  /** Reads, at each scrape, how many media nodes a token node of a cluster places rooms on. */
  watchMediaNodes(source: MediaNodesMetricsSource): void;
  /** Told once per revocation that closed sessions, with the seconds from its arrival to their close. */
  observeRevocationClose(seconds: number): void;
}

/** What the token API records: one call per request. */
export interface TokenMetrics {
  /** A token was issued, `seconds` after its request arrived. */
  issued(seconds: number): void;
  /** A token request was refused with error `code` (from the error catalogue), after `seconds`. */
  refused(code: string, seconds: number): void;
  /** A revocation was accepted. */
  revoked(): void;
  /** A token request asked for TURN credentials (`turn: true`): they were issued, or refused with `turn_unavailable`. */
  turnCredentials(outcome: TurnOutcome): void;
}

export const TURN_OUTCOMES = ['issued', 'unavailable'] as const;
export type TurnOutcome = (typeof TURN_OUTCOMES)[number];

/** What a webhook delivery attempt came to: 2xx, failed and to be retried, or given up after the last attempt. */
export const WEBHOOK_OUTCOMES = ['delivered', 'failed', 'abandoned'] as const;
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

/** Joined participants, those publishing at least one stream, those receiving at least one, and published streams. */
export interface LiveCounts {
  readonly participants: number;
  readonly publishers: number;
  readonly subscribers: number;
  readonly streams: number;
}

/** The media hub as the metrics see it: plain numbers the forwarding path increments. */
export interface MediaMetricsSource {
  readonly sessionCount: number;
  readonly roomCount: number;
  readonly stats: MediaStats;
  liveCounts(): LiveCounts;
}

export interface SignalingMetricsSource {
  readonly openStreams: number;
}

/** The live media nodes as a token node last read them. */
export interface MediaNodesMetricsSource {
  nodes(): readonly unknown[];
  /** Placements this process made while every node was full. */
  overCapacityPlacements(): number;
}

/** 1 ms to 1 s: a token is signed in well under a millisecond; a slow store shows in the upper buckets. */
const ISSUE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
/** 0.1 ms to 1 s: closing the sessions of one grant takes microseconds unless the event loop is busy. */
const REVOCATION_CLOSE_BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1];
/** 5 ms to 2 s: loopback and a LAN in the first buckets, a call across continents near 0.3 s, a congested link above. */
const RTT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2];
/** The kinds each transport carries: WebRTC has no data m-lines (docs/protocol/media.md). */
const KINDS = { websocket: ['audio', 'video', 'data'], webrtc: ['audio', 'video'] } as const;
const KIND_INDEX = { audio: 1, video: 2, data: 3 } as const;

/** The resolution of prom-client's own event loop sampler, which nothing reads (ms). */
const UNREAD_SAMPLER_MS = 60_000;

export function createMetrics(): PlatformMetrics {
  const registry = new Registry();
  // its event loop sampler is replaced, unread (metrics/event-loop.ts); at its 10 ms default it woke
  // the process 100 times a second for nothing
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: UNREAD_SAMPLER_MS });
  replaceEventLoopLag(registry);

  const issued = new Counter({ name: 'rtc_tokens_issued_total', help: 'Media tokens issued by the token API', registers: [registry] });
  const refused = new Counter({
    name: 'rtc_tokens_refused_total', help: 'Token requests refused, by error code', labelNames: ['code'] as const, registers: [registry],
  });
  const latency = new Histogram({
    name: 'rtc_token_issue_duration_seconds', help: 'Time from a token request\'s arrival to its answer, by outcome',
    labelNames: ['outcome'] as const, buckets: ISSUE_BUCKETS, registers: [registry],
  });
  const issuedLatency = latency.labels('issued');
  const refusedLatency = latency.labels('refused');
  const revocations = new Counter({ name: 'rtc_token_revocations_total', help: 'Revocations accepted by the token API', registers: [registry] });
  const revocationClose = new Histogram({
    name: 'rtc_media_revocation_close_seconds',
    help: 'On a media node, time from receiving a revocation to closing the sessions of the revoked grant',
    buckets: REVOCATION_CLOSE_BUCKETS, registers: [registry],
  });
  const webhooks = new Counter({
    name: 'rtc_webhook_deliveries_total', help: 'Webhook delivery attempts, by outcome', labelNames: ['outcome'] as const, registers: [registry],
  });
  for (const outcome of WEBHOOK_OUTCOMES) webhooks.labels(outcome).inc(0);
  const turn = new Counter({
    name: 'rtc_turn_credentials_total', help: 'TURN credentials asked for in token requests, by outcome',
    labelNames: ['outcome'] as const, registers: [registry],
  });
  for (const outcome of TURN_OUTCOMES) turn.labels(outcome).inc(0);

  return {
    registry,
    tokens: {
      issued(seconds) {
        issued.inc();
        issuedLatency.observe(seconds);
      },
      refused(code, seconds) {
        refused.labels(code).inc();
        refusedLatency.observe(seconds);
      },
      revoked: () => revocations.inc(),
      turnCredentials: (outcome) => turn.labels(outcome).inc(),
    },
    recordWebhookDelivery: (outcome) => webhooks.labels(outcome).inc(),
    observeRevocationClose: (seconds) => revocationClose.observe(seconds),
    watchMedia(source) {
      gauge(registry, 'rtc_media_sessions', 'Open media sessions on this node (joined or in their handshake)', () => source.sessionCount);
      gauge(registry, 'rtc_media_rooms', 'Media rooms with at least one member on this node', () => source.roomCount);
      counterOf(registry, 'rtc_media_frames_forwarded_total', 'Media frames authenticated and forwarded to subscribers',
        () => source.stats.framesForwarded);
      counterOf(registry, 'rtc_media_frames_dropped_total', 'Media frames dropped on arrival (late, replayed, or crossed an unpublish)',
        () => source.stats.framesDropped);
      counterOf(registry, 'rtc_media_rtp_packets_forwarded_total', 'RTP packets sent on to subscribers over WebRTC (one per subscriber)',
        () => source.stats.rtpForwarded);
      watchMediaQuality(registry, source);
    },
    watchSignaling(source) {
      gauge(registry, 'rtc_signaling_streams', 'Open signaling event streams', () => source.openStreams);
    },
    watchMediaNodes(source) {
      gauge(registry, 'rtc_media_nodes_live', 'Live media nodes this token node places rooms on, as last read (at most a second old)',
        () => source.nodes().length);
      countersOf(registry, 'rtc_media_placements_over_capacity_total',
        'Users this token node placed on a media node already at RTC_MEDIA_MAX_SESSIONS, every node it could use being full',
        [{ labels: {}, read: () => source.overCapacityPlacements() }]);
    },
  };
}

/** The media role's traffic, quality and capacity (docs/operations/metrics.md, "Media quality"). */
function watchMediaQuality(registry: Registry, source: MediaMetricsSource): void {
  const { stats } = source;
  const traffic: Record<'websocket' | 'webrtc', Record<'in' | 'out', Traffic>> = {
    websocket: { in: stats.websocketIn, out: stats.websocketOut },
    webrtc: { in: stats.webrtcIn, out: stats.webrtcOut },
  };
  const trafficSeries = (field: 'bytes' | 'packets'): Series<'transport' | 'direction' | 'kind'>[] =>
    (['websocket', 'webrtc'] as const).flatMap((transport) => (['in', 'out'] as const).flatMap((direction) =>
      KINDS[transport].map((kind) => ({
        labels: { transport, direction, kind },
        read: () => traffic[transport][direction][field][KIND_INDEX[kind]] ?? 0,
      }))));
  countersOf(registry, 'rtc_media_bytes_total', 'Media bytes received from publishers (in) and sent to subscribers (out): WebSocket frames whole, RTP payloads',
    trafficSeries('bytes'));
  countersOf(registry, 'rtc_media_packets_total', 'Media packets received from publishers (in) and sent to subscribers (out): WebSocket frames, RTP packets',
    trafficSeries('packets'));
  countersOf(registry, 'rtc_media_packets_lost_total', 'RTP packets lost from publishers to this node (in) and from it to subscribers (out), per receiver reports', [
    { labels: { direction: 'in' }, read: () => stats.packetsLostIn },
    { labels: { direction: 'out' }, read: () => stats.packetsLostOut },
  ]);
  countersOf(registry, 'rtc_media_input_refused_total', 'RTP packets and RTCP datagrams from clients refused before parsing (malformed, or claiming more than their bytes hold): the whole process\'s', [
    { labels: { packet: 'rtp' }, read: () => refusedInput.rtp },
    { labels: { packet: 'rtcp' }, read: () => refusedInput.rtcp },
  ]);
  countersOf(registry, 'rtc_media_nacks_total', 'RTCP generic NACK messages received from subscribers and sent to publishers', [
    { labels: { direction: 'received' }, read: () => stats.nacksReceived },
    { labels: { direction: 'sent' }, read: () => stats.nacksSent },
  ]);
  countersOf(registry, 'rtc_media_key_frame_requests_total', 'Key frame requests (PLI, FIR) received from subscribers and PLIs sent to publishers', [
    { labels: { direction: 'received' }, read: () => stats.keyFrameRequestsReceived },
    { labels: { direction: 'sent' }, read: () => stats.keyFrameRequestsSent },
  ]);
  countersOf(registry, 'rtc_media_layer_switches_total', 'Changes of the simulcast layer forwarded to a subscriber, to a larger (up) or smaller (down) one', [
    { labels: { direction: 'up' }, read: () => stats.layerSwitchesUp },
    { labels: { direction: 'down' }, read: () => stats.layerSwitchesDown },
  ]);
  counterOf(registry, 'rtc_media_bandwidth_pauses_total', 'Videos paused for a subscriber whose downlink estimate does not fit their smallest layer',
    () => stats.bandwidthPauses);
  countersOf(registry, 'rtc_media_ice_total', 'WebRTC peer connections by the outcome of their ICE',
    ICE_OUTCOMES.map((outcome) => ({ labels: { outcome }, read: () => stats.ice[outcome] })));
  countersOf(registry, 'rtc_media_ice_selected_pairs_total', 'Connected WebRTC peer connections by their selected candidate pair: through a TURN relay or direct', [
    { labels: { path: 'direct' }, read: () => stats.icePaths.direct },
    { labels: { path: 'relay' }, read: () => stats.icePaths.relay },
  ]);
  const rtt = new Histogram({
    name: 'rtc_media_rtt_seconds', help: 'Round trips to subscribers, from their receiver reports answering this node\'s sender reports',
    buckets: RTT_BUCKETS, registers: [registry],
  });
  stats.observeRtt = (seconds) => rtt.observe(seconds);
  // one walk over the rooms per scrape: the first of the four gauges reads, the others use its figures
  let counts: LiveCounts = { participants: 0, publishers: 0, subscribers: 0, streams: 0 };
  gauge(registry, 'rtc_media_participants', 'Participants joined to a media room on this node', () => {
    counts = source.liveCounts();
    return counts.participants;
  });
  gauge(registry, 'rtc_media_publishers', 'Participants on this node publishing at least one stream', () => counts.publishers);
  gauge(registry, 'rtc_media_subscribers', 'Participants on this node subscribed to at least one published stream', () => counts.subscribers);
  gauge(registry, 'rtc_media_streams', 'Streams published on this node', () => counts.streams);
}

function gauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name, help, registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/** A counter whose total is kept as a plain number by its owner, so the hot path pays one addition. */
function counterOf(registry: Registry, name: string, help: string, read: () => number): void {
  let seen = 0;
  new Counter({
    name, help, registers: [registry],
    collect() {
      const total = read();
      if (total > seen) this.inc(total - seen);
      seen = total;
    },
  });
}

interface Series<L extends string> {
  readonly labels: Readonly<Record<L, string>>;
  read(): number;
}

/** A labelled counter whose totals are plain numbers kept by their owner; every series is present from the start. */
function countersOf<L extends string>(registry: Registry, name: string, help: string, series: readonly Series<L>[]): void {
  const seen = series.map(() => 0);
  const labelNames = Object.keys(series[0]?.labels ?? {}) as L[];
  new Counter<L>({
    name, help, labelNames, registers: [registry],
    collect() {
      series.forEach((s, i) => {
        const total = s.read();
        this.inc(s.labels, Math.max(total - seen[i]!, 0));
        seen[i] = Math.max(total, seen[i]!);
      });
    },
  });
}
