/**
 * The usage kind of a media session (docs/decisions.md, "Usage kind of a session"): what its minutes
 * are priced as in the price list (docs/billing.md, "Usage kinds, plans and discounts").
 */
import type { PriceList } from '../billing/catalog/price-list.ts';

/** Size assumed for a video whose picture size the media node cannot see (WebSocket frames: opaque payloads). */
export const UNKNOWN_VIDEO_PIXELS = 1;

/** The audio usage kind: a session that never received or published video. */
export const AUDIO_KIND = 'audio';
/** Minutes whose media went through TURN, counted on top of their audio or video kind. */
export const TURN_RELAY_KIND = 'turn_relay';

/**
 * What a media node notes of one session while it is open: whether it published or received video
 * and the largest picture of it (in pixels), and whether its media went through a TURN relay.
 */
export class SessionUsage {
  /** 0: no video; otherwise the largest picture seen, at least `UNKNOWN_VIDEO_PIXELS`. */
  videoPixels = 0;
  relayed = false;

  /** Video went in or out of the session; `width` x `height` when the node knows them (a VP8 key frame). */
  noteVideo(width = 0, height = 0): void {
    this.videoPixels = Math.max(this.videoPixels, width * height, UNKNOWN_VIDEO_PIXELS);
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
