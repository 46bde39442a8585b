import type { DownlinkEstimator } from '../rtp/downlink-estimator.ts';
import type { DownTrack } from './down-track.ts';

/** The downlink's state as the media role's debug log line `media: downlink bandwidth` shows it. */
export interface DownlinkSnapshot {
  readonly estimateKbps: number;
  readonly ackedKbps: number;
  readonly lossPercent: number;
  readonly delay: string;
  readonly rttMs: number | undefined;
  readonly audioKbps: number;
  readonly videos: readonly {
    readonly streamId: number; readonly target: number; readonly current: number; readonly layerKbps: readonly number[]; readonly layerFps: readonly number[];
    readonly paused: boolean;
    /** Key frames asked for this video since the last snapshot, and the playout floor its packets carry now (ms). */
    readonly keyFrameAsks: number; readonly playoutFloorMs: number;
  }[];
}

/** The downlink's state now, for its debug log line; `floorOf` gives a video's playout floor now. */
export function snapshotOf(
  estimator: DownlinkEstimator, audioBps: number, rttMs: number | undefined, tracks: Iterable<DownTrack>, now: number,
  floorOf: (track: DownTrack) => number,
): DownlinkSnapshot {
  const kbps = (bps: number): number => Math.round(bps / 1000);
  return {
    estimateKbps: kbps(estimator.bps),
    ackedKbps: kbps(estimator.ackedBps),
    lossPercent: Math.round(estimator.loss * 1000) / 10,
    delay: estimator.delaySignal,
    rttMs: rttMs === undefined ? undefined : Math.round(rttMs),
    audioKbps: kbps(audioBps),
    videos: [...tracks].filter((o) => o.kind === 'video').map((o) => ({
      streamId: o.streamId, target: o.target, current: o.current, layerKbps: (o.layers?.rates(now) ?? []).map(kbps),
      layerFps: o.layers?.frameRates() ?? [],
      paused: o.paused, keyFrameAsks: o.takeKeyFrameAsks(), playoutFloorMs: Math.round(floorOf(o)),
    })),
  };
}
