import type { MediaKind } from '@rtc/protocol';
import { FLOW, UNKNOWN_VIDEO_PIXELS, flowKey, type SessionUsage } from '../../sessions/usage-kind.ts';
import type { RtpAccount } from '../room/member.ts';
import type { ForwardedRtp, StreamLayers } from '../rtp/layers.ts';
import type { QualityMeter } from './quality.ts';

/**
 * Counts a session's RTP in its quality meter (docs/reference/room-api.md, "Quality") and its usage
 * (docs/console.md, "Usage kind of a session"); the published stream and the down tracks call it.
 */
export class MediaAccount implements RtpAccount {
  private readonly meter: QualityMeter;
  private readonly usage: SessionUsage;

  constructor(meter: QualityMeter, usage: SessionUsage) {
    this.meter = meter;
    this.usage = usage;
  }

  rtpIn(streamId: number, kind: MediaKind, packet: ForwardedRtp, layers: StreamLayers | undefined, nowMs: number): void {
    this.meter.received(packet.payload.length);
    if (kind === 'video') this.usage.noteVerified(Math.max(layers?.verifiedPixels(packet.layer) ?? 0, UNKNOWN_VIDEO_PIXELS));
    else this.usage.noteMedia(flowKey(FLOW.rtpIn, streamId), false, packet.payload.length, nowMs);
  }

  rtpOut(streamId: number, kind: MediaKind, packet: ForwardedRtp, layers: StreamLayers | undefined, nowMs: number): void {
    // billed by the layer it receives, as verified at its publisher, and by what reached it
    const verified = kind === 'video' ? layers?.verifiedPixels(packet.layer) ?? 0 : undefined;
    this.usage.noteMedia(flowKey(FLOW.rtpOut, streamId), kind === 'video', packet.payload.length, nowMs, verified);
    this.meter.sent(packet.payload.length);
  }
}
