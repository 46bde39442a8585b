/**
 * The usage kind of a media session (docs/decisions/billing.md, "Usage kinds and the cost of
 * minutes"): what its minutes are priced as in the price list (docs/billing.md, "Usage kinds, plans and discounts").
 */
import type { PriceList } from '../billing/catalog/price-list.ts';

/** Size assumed for a video whose picture size the media node cannot see (WebSocket frames: opaque payloads). */
export const UNKNOWN_VIDEO_PIXELS = 1;

/** The audio usage kind: a session that never received or published video. */
export const AUDIO_KIND = 'audio';
/** Minutes whose media went through TURN, counted on top of their audio or video kind. */
export const TURN_RELAY_KIND = 'turn_relay';

/** Media is measured for its usage kind in windows of this length. */
export const USAGE_WINDOW_MS = 1000;
/** What a stream shows counts once it has shown it this many windows in a row (5 s without a gap of a window). */
export const SUSTAINED_WINDOWS = 5;
/**
 * The bitrate a picture size needs to count, per pixel (bit/s): more than 640x480 (`video_hd`) needs
 * 307 kbit/s sustained, more than 1280x720 922 kbit/s, more than 1920x1080 2.07 Mbit/s. Deliberately
 * low, so that an honest stream at a low bitrate keeps its kind; a size claimed beyond what the
 * stream carries counts only as far as its bitrate goes.
 */
export const VERIFIED_BPS_PER_PIXEL = 1;
/**
 * Media the node cannot read a size in (sealed WebSocket frames of any kind, WebRTC audio), summed
 * over all the streams a session sends, or all it receives: above this rate, sustained, it is video
 * traffic whatever the client calls it (Opus tops out at 510 kbit/s; docs/decisions/billing.md, "Opaque media
 * is measured per session and direction")...
 */
export const OPAQUE_AUDIO_MAX_BPS = 512_000;
/** ...and counts as the video of `bps / OPAQUE_BPS_PER_PIXEL` pixels: 1.23 Mbit/s is 640x480, 3.7 Mbit/s 1280x720, 8.3 Mbit/s 1920x1080. */
export const OPAQUE_BPS_PER_PIXEL = 4;
/** Video flows of a known picture a session's usage follows at once; the least recently active goes (what it verified stays counted). */
export const MAX_USAGE_FLOWS = 64;

/**
 * One stream's rate, in windows of USAGE_WINDOW_MS: what the last SUSTAINED_WINDOWS windows in a row
 * all showed. A window without a packet starts the count again.
 */
export class SustainedRate {
  private windowStartMs = 0;
  private windowBytes = 0;
  private lastMs = Number.NEGATIVE_INFINITY;
  private readonly recent: number[] = [];
  /** What `add` returns: worked out as a window closes, not at each packet (it runs for every packet forwarded). */
  private sustained = 0;

  /**
   * Counts a packet of `bytes` at `nowMs`, of video whose picture is claimed to be `claimedPixels`
   * (`verifiedPixels`), or of media of no readable size when undefined (`opaquePixels`). Returns the
   * pixels every one of the last SUSTAINED_WINDOWS windows supported, 0 before.
   */
  add(bytes: number, nowMs: number, claimedPixels?: number): number {
    if (nowMs - this.lastMs > USAGE_WINDOW_MS) {
      this.recent.length = 0;
      this.sustained = 0;
      this.windowStartMs = nowMs;
      this.windowBytes = 0;
    }
    this.lastMs = nowMs;
    this.windowBytes += bytes;
    const span = nowMs - this.windowStartMs;
    if (span >= USAGE_WINDOW_MS) {
      const bps = (this.windowBytes * 8 * 1000) / span;
      this.recent.push(claimedPixels === undefined ? opaquePixels(bps) : verifiedPixels(claimedPixels, bps));
      if (this.recent.length > SUSTAINED_WINDOWS) this.recent.shift();
      this.sustained = this.recent.length < SUSTAINED_WINDOWS ? 0 : Math.min(...this.recent);
      this.windowStartMs = nowMs;
      this.windowBytes = 0;
    }
    return this.sustained;
  }
}

/** The pixels a video's bitrate lets a claimed size count for (docs/decisions/billing.md, "Usage kinds and the cost of minutes"). */
export function verifiedPixels(claimedPixels: number, bps: number): number {
  return Math.min(claimedPixels, bps / VERIFIED_BPS_PER_PIXEL);
}

/** The video pixels a rate of media the node cannot read stands for: 0 at audio rates. */
export function opaquePixels(bps: number): number {
  return bps > OPAQUE_AUDIO_MAX_BPS ? bps / OPAQUE_BPS_PER_PIXEL : 0;
}

/** Which way and transport a flow of a session's media takes. */
export const FLOW = { websocketIn: 0, websocketOut: 1, rtpIn: 2, rtpOut: 3 } as const;

/** The key of a session's flow of one stream one way (stream ids are 32-bit: the key stays a safe integer). */
export function flowKey(way: (typeof FLOW)[keyof typeof FLOW], streamId: number): number {
  return streamId * 4 + way;
}

/** The direction of a flow by its `flowKey`: 0 what the session sends (into the node), 1 what it receives. */
function direction(key: number): 0 | 1 {
  return key % 2 === 0 ? 0 : 1;
}

/**
 * What a media node notes of one session while it is open (docs/console.md, "Usage kind of a
 * session"): whether it published or received video and the largest picture of it the node could
 * verify (in pixels), and whether its media went through one of the platform's TURN relays.
 */
export class SessionUsage {
  /** 0: no video; otherwise the largest verified picture, at least `UNKNOWN_VIDEO_PIXELS`. */
  videoPixels = 0;
  relayed = false;
  /** The rate of each flow of video of a known picture in or out, by `flowKey`, with when it was last active (`uses`). */
  private readonly flows = new Map<number, { readonly rate: SustainedRate; used: number }>();
  private uses = 0;
  /** The rate of all media of no readable size the session sends, and of all it receives: streams split no rate. */
  private readonly opaque = [new SustainedRate(), new SustainedRate()] as const;

  /** Video went in or out of the session: at least the smallest video kind. */
  noteVideo(): void {
    this.noteVerified(UNKNOWN_VIDEO_PIXELS);
  }

  /** A picture size verified elsewhere (a published layer's, `StreamLayers.verifiedPixels`). */
  noteVerified(pixels: number): void {
    this.videoPixels = Math.max(this.videoPixels, pixels);
  }

  /**
   * A packet of `bytes` in or out on `flow`. Video of a known picture (`claimedPixels`, as verified
   * where it came from) counts as far as the flow's own rate goes; media of no size the node can
   * read (video without `claimedPixels`, audio, data) by the rate of all such media of the session
   * the same way; video is at least the smallest kind.
   */
  noteMedia(flow: number, video: boolean, bytes: number, nowMs: number, claimedPixels?: number): void {
    if (video) this.noteVideo();
    const rate = video && claimedPixels !== undefined ? this.flow(flow) : this.opaque[direction(flow)];
    this.noteVerified(rate.add(bytes, nowMs, video ? claimedPixels : undefined));
  }

  private flow(key: number): SustainedRate {
    const uses = ++this.uses;
    const flow = this.flows.get(key);
    if (flow) {
      flow.used = uses;
      return flow.rate;
    }
    // eviction takes the flow idle longest: a scan of at most MAX_USAGE_FLOWS, only when a flow is new
    if (this.flows.size >= MAX_USAGE_FLOWS) {
      let idlest: number | undefined;
      let oldest = Infinity;
      for (const [k, f] of this.flows) {
        if (f.used < oldest) {
          oldest = f.used;
          idlest = k;
        }
      }
      this.flows.delete(idlest!);
    }
    const rate = new SustainedRate();
    this.flows.set(key, { rate, used: uses });
    return rate;
  }
}

/**
 * `audio` without video; otherwise the first video kind of the price list whose `max_pixels` holds
 * the picture (one of unknown size counts as the smallest: `video_sd`), the unbounded one above them.
 */
export function usageKindOf(list: PriceList, videoPixels: number): string {
  if (videoPixels <= 0) return AUDIO_KIND;
  // video tiers are ordered by max_pixels, the unbounded one last (checked when the price list loads)
  return list.usage_kinds.find((k) => k.medium === 'video' && (k.max_pixels === null || videoPixels <= k.max_pixels))?.id ?? AUDIO_KIND;
}
