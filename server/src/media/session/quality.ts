/** A participant's media quality, as its media node measures it for the room service API (docs/reference/room-api.md, "Quality"). */
import type { LiveQuality } from '../../rooms/store.ts';
import type { PeerQuality } from '../webrtc/peer.ts';

/** Two significant digits: a bitrate that only wobbles does not change (so is not written again). */
export function roundBitrate(bps: number): number {
  if (!(bps > 0)) return 0;
  const step = 10 ** Math.max(Math.floor(Math.log10(bps)) - 1, 0);
  return Math.round(bps / step) * step;
}

/** A fraction to 0.1 %. */
export const roundLoss = (fraction: number | undefined): number | null =>
  fraction === undefined ? null : Math.min(Math.max(Math.round(fraction * 1000) / 1000, 0), 1);

/** A round trip to 10 ms. */
export const roundRtt = (ms: number | undefined): number | null => (ms === undefined ? null : Math.round(ms / 10) * 10);

/**
 * Counts the media bytes a session receives and sends (RTP payloads, or WebSocket media frames) and
 * turns them into rates over the time since the last sample.
 */
export class QualityMeter {
  private bytesIn = 0;
  private bytesOut = 0;
  private sinceMs: number;

  constructor(nowMs: number) {
    this.sinceMs = nowMs;
  }

  received(bytes: number): void {
    this.bytesIn += bytes;
  }

  sent(bytes: number): void {
    this.bytesOut += bytes;
  }

  /**
   * The quality since the last sample, and a new period starts; undefined when no time passed.
   * `peer` is what the WebRTC connection measured (none for a WebSocket-only session); `ridOf`
   * names a layer of a simulcast stream (undefined for a stream of one layer).
   */
  sample(nowMs: number, peer: PeerQuality | undefined, ridOf: (streamId: number, layer: number) => string | undefined): LiveQuality | undefined {
    const elapsedMs = nowMs - this.sinceMs;
    if (elapsedMs <= 0) return undefined;
    const rate = (bytes: number): number => roundBitrate((bytes * 8 * 1000) / elapsedMs);
    const quality = {
      bitrateIn: rate(this.bytesIn),
      bitrateOut: rate(this.bytesOut),
      packetLossIn: roundLoss(peer?.lossIn),
      packetLossOut: roundLoss(peer?.lossOut),
      rttMs: roundRtt(peer?.rttMs),
      layers: Object.fromEntries([...peer?.layers ?? []].flatMap(([streamId, layer]) => {
        const rid = ridOf(streamId, layer);
        return rid === undefined ? [] : [[String(streamId), rid]];
      })),
      updatedAt: Math.floor(nowMs / 1000),
    };
    this.bytesIn = 0;
    this.bytesOut = 0;
    this.sinceMs = nowMs;
    return quality;
  }
}
