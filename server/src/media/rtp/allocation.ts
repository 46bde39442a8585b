/**
 * How a subscriber's downlink estimate is shared among the videos it receives (docs/protocol/media.md,
 * "Bandwidth"). Audio is taken off the estimate before this runs. Every video first gets its smallest
 * layer, in order, while they fit; what cannot get even that is paused. What is left raises videos one
 * layer at a time, up to the largest layer the subscriber's bounds allow. Going above the layer a video
 * has now needs 10 % to spare, resuming a paused one 10 %, and a forwarded video keeps its smallest
 * layer until that layer needs a quarter more than is left, so that a video does not flap at the edge.
 */

/** One received video: its layers' rates (0: not available now), their sizes, the client's bounds, and its layer now (-1 paused). */
export interface VideoDemand {
  readonly layers: readonly number[];
  /**
   * Whether each layer's rate has settled (layers.ts); a layer that has not is not raised to, since
   * a publisher's encoder ramps a layer up from a low rate. All settled when absent.
   */
  readonly settled?: readonly boolean[] | undefined;
  readonly sizes: readonly { readonly width: number; readonly height: number }[];
  readonly bounds: { readonly maxWidth: number | null; readonly maxHeight: number | null; readonly maxLayer: number | null };
  readonly current: number;
}

const UPGRADE_MARGIN = 0.9;
/**
 * A paused video resumes only when its smallest layer fits with this much to spare. While paused,
 * only a probe raises the estimate, and a probe shows at most what the link carries: on a link the
 * smallest layer and the audio fill to 80 % (300 kbit/s for 170 and 60), 20 % to spare was never
 * shown, and the video stayed paused for good.
 */
const RESUME_MARGIN = 0.9;
/**
 * A video that is forwarded keeps its smallest layer while that layer needs at most this much more
 * than is left: the estimate dips for a moment after each step up (a key frame's queue), and a
 * pause costs a key frame and a visible stop. A link that really cannot carry it loses packets,
 * and the loss part of the estimate then takes it lower than this.
 */
export const KEEP_MARGIN = 1.25;

/** The layer each video gets, -1 for paused. */
export function allocate(demands: readonly VideoDemand[], availableBps: number): number[] {
  const targets = demands.map(() => -1);
  const ceilings = demands.map((d) => ceiling(d));
  let used = 0;
  // smallest available layer of each, in order
  for (const [i, d] of demands.entries()) {
    if (ceilings[i]! < 0) continue;
    const lowest = d.layers.findIndex((r) => r > 0);
    if (lowest < 0 || lowest > ceilings[i]!) {
      // nothing measured yet: start on the smallest layer and let feedback tell
      targets[i] = d.layers.length === 0 ? 0 : Math.min(Math.max(lowest, 0), ceilings[i]!);
      continue;
    }
    const rate = d.layers[lowest]!;
    const margin = d.current < 0 ? RESUME_MARGIN : KEEP_MARGIN;
    if (used + rate <= availableBps * margin) {
      targets[i] = lowest;
      used += rate;
    }
  }
  // then one layer up at a time, round robin
  for (let raised = true; raised;) {
    raised = false;
    for (const [i, d] of demands.entries()) {
      const at = targets[i]!;
      if (at < 0) continue;
      let next = at + 1;
      while (next <= ceilings[i]! && !(d.layers[next]! > 0 && (next <= d.current || (d.settled?.[next] ?? true)))) next += 1;
      if (next > ceilings[i]!) continue;
      const extra = d.layers[next]! - (d.layers[at] ?? 0);
      const margin = next > d.current ? UPGRADE_MARGIN : 1;
      if (used + extra <= availableBps * margin) {
        targets[i] = next;
        used += extra;
        raised = true;
      }
    }
  }
  return targets;
}

/** The largest layer the client's bounds allow; -1 for a hidden video. */
export function ceiling(d: VideoDemand): number {
  const { bounds, sizes } = d;
  if (bounds.maxWidth === 0 || bounds.maxHeight === 0) return -1;
  let top = Math.max(d.layers.length, 1) - 1;
  if (bounds.maxLayer !== null) top = Math.min(top, bounds.maxLayer);
  while (top > 0) {
    const size = sizes[top];
    const fits = !size || size.width === 0
      || ((bounds.maxWidth === null || size.width <= bounds.maxWidth * 1.1) && (bounds.maxHeight === null || size.height <= bounds.maxHeight * 1.1));
    if (fits) break;
    top -= 1;
  }
  return top;
}
