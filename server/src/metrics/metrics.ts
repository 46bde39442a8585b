import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

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
}

/** What a webhook delivery attempt came to: 2xx, failed and to be retried, or given up after the last attempt. */
export const WEBHOOK_OUTCOMES = ['delivered', 'failed', 'abandoned'] as const;
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

/** The media hub as the metrics see it: plain numbers the forwarding path increments. */
export interface MediaMetricsSource {
  readonly sessionCount: number;
  readonly roomCount: number;
  readonly stats: { readonly framesForwarded: number; readonly framesDropped: number; readonly rtpForwarded: number };
}

export interface SignalingMetricsSource {
  readonly openStreams: number;
}

/** The live media nodes as a token node last read them. */
export interface MediaNodesMetricsSource {
  nodes(): readonly unknown[];
}

/** 1 ms to 1 s: a token is signed in well under a millisecond; a slow store shows in the upper buckets. */
const ISSUE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
/** 0.1 ms to 1 s: closing the sessions of one grant takes microseconds unless the event loop is busy. */
const REVOCATION_CLOSE_BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1];

export function createMetrics(): PlatformMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

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
    },
    watchSignaling(source) {
      gauge(registry, 'rtc_signaling_streams', 'Open signaling event streams', () => source.openStreams);
    },
    watchMediaNodes(source) {
      gauge(registry, 'rtc_media_nodes_live', 'Live media nodes this token node places rooms on, as last read (at most a second old)',
        () => source.nodes().length);
    },
  };
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
