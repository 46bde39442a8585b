/**
 * How a track is sent: a camera as simulcast layers, smallest first as the media server ranks
 * them (docs/protocol/media.md, "A client, step by step"); a screen as one layer that keeps its
 * resolution; a microphone as it is.
 */
import { MAX_SIMULCAST_LAYERS } from '@rtc/protocol';
import type { MediaStreamTrackLike, RtpEncodingLike } from './dom.ts';
import type { StreamSource } from '../types.ts';

/**
 * One simulcast layer of a published video: how much smaller than the captured picture it is, and
 * what it may cost.
 *
 * @example
 * ```ts
 * const layers: VideoLayer[] = [{ scaleResolutionDownBy: 2, maxBitrate: 400_000 }, { scaleResolutionDownBy: 1, maxBitrate: 1_200_000 }];
 * await session.publishTrack(camera, { simulcast: layers });
 * ```
 */
export interface VideoLayer {
  /** Width and height are divided by this (1: as captured); at least 1. */
  readonly scaleResolutionDownBy: number;
  /** Bits per second at most. */
  readonly maxBitrate: number;
  /** Frames per second at most (default: as captured). */
  readonly maxFramerate?: number;
}

/**
 * The camera layers of a 1280x720 capture, smallest first: a quarter, half and the full captured
 * size, 320x180, 640x360 and 1280x720 at 150 kbit/s, 600 kbit/s and 1.7 Mbit/s: a thumbnail that
 * fits a 300 kbit/s downlink beside the audio, a tile of a grid, and a speaker view. VP8 looks
 * clean at those rates for 30 frames per second, and all three together (2.45 Mbit/s) fit a common
 * home uplink. Other
 * capture sizes get `defaultVideoLayers(width, height)`.
 *
 * @example
 * ```ts
 * const [, , full] = DEFAULT_VIDEO_LAYERS;
 * await session.publishTrack(camera, { simulcast: [{ ...full!, maxBitrate: 2_500_000 }] });
 * ```
 */
export const DEFAULT_VIDEO_LAYERS: readonly VideoLayer[] = Object.freeze([
  Object.freeze({ scaleResolutionDownBy: 4, maxBitrate: 150_000 }),
  Object.freeze({ scaleResolutionDownBy: 2, maxBitrate: 600_000 }),
  Object.freeze({ scaleResolutionDownBy: 1, maxBitrate: 1_700_000 }),
]);

/**
 * The default layers of a camera captured at `width` x `height`: as many as Chromium encodes at
 * that size (it leaves the largest layers off beyond: three from 960x540, two from 480x270, one
 * below), each half the size of the next, with a rate that grows with its pixels as VP8 needs at
 * 30 frames per second (about 57 x pixels^0.75 bit/s: 260 kbit/s at 320x240, 740 kbit/s at 640x480),
 * the smallest of several at most 150 kbit/s.
 * 1280x720 gives `DEFAULT_VIDEO_LAYERS`.
 *
 * @example
 * ```ts
 * defaultVideoLayers(640, 480); // [{ scaleResolutionDownBy: 2, maxBitrate: 150_000 }, { scaleResolutionDownBy: 1, maxBitrate: 740_000 }]
 * ```
 */
export function defaultVideoLayers(width: number, height: number): readonly VideoLayer[] {
  const pixels = width * height;
  if (!(pixels > 0)) return DEFAULT_VIDEO_LAYERS;
  const count = pixels >= 960 * 540 ? 3 : pixels >= 480 * 270 ? 2 : 1;
  return Array.from({ length: count }, (_, i) => {
    const scale = 2 ** (count - 1 - i);
    const rate = layerBitrate(pixels / (scale * scale));
    // the smallest of several layers is the one a poor downlink gets: it fits 300 kbit/s beside the audio
    return { scaleResolutionDownBy: scale, maxBitrate: count > 1 && i === 0 ? Math.min(rate, SMALLEST_LAYER_MAX_BITRATE) : rate };
  });
}

/** The smallest layer of a simulcast camera costs at most this (bit/s). */
const SMALLEST_LAYER_MAX_BITRATE = 150_000;

/** A VP8 layer's rate for 30 frames per second: 57 x pixels^0.75, in steps of 10 kbit/s, 3 Mbit/s at most. */
function layerBitrate(pixels: number): number {
  return Math.min(Math.round((57 * pixels ** 0.75) / 10_000) * 10_000, 3_000_000);
}

/** Simulcast rids: quarter, half, full. Layers get the last ones, so the full-size layer is always `f`. */
const RIDS = ['q', 'h', 'f'] as const;

/**
 * Options of `publishTrack`.
 *
 * @example
 * ```ts
 * await session.publishTrack(camera, { streamId: 2, simulcast: false }); // one layer
 * await session.publishTrack(screen, { streamId: 3, source: 'screen' });
 * ```
 */
export interface PublishTrackOptions {
  /** A stream id of the grant's `publish_streams`; by default the first one not in use. */
  readonly streamId?: number;
  /**
   * What a video track shows. `screen` (found on its own for a track of `getDisplayMedia`) sends
   * one layer that keeps its resolution and sharpness when the bandwidth drops; `camera` sends
   * simulcast layers. For audio, `screen` tells the server the track is a screen share's sound
   * (listed as `screen_share_audio` by the room service API); otherwise it is a microphone.
   */
  readonly source?: 'camera' | 'screen';
  /**
   * Simulcast layers of a video track: `true` (the default for a camera) sends
   * `defaultVideoLayers` of the capture's size (`DEFAULT_VIDEO_LAYERS` when the track does not
   * tell it), `false` one layer, an array (1 to 3 layers, smallest first) those layers. Ignored for audio.
   */
  readonly simulcast?: boolean | readonly VideoLayer[];
}

/** How the SDK sends one published track. */
export interface SendPlan {
  readonly source: 'camera' | 'screen' | 'microphone';
  /** The sender's encodings; undefined leaves the browser's single default one. */
  readonly encodings: readonly RtpEncodingLike[] | undefined;
  /** Set on the track when it has none: `detail` for a screen. */
  readonly contentHint: 'detail' | undefined;
  /** Set on the sender's parameters when the browser takes it. */
  readonly degradationPreference: 'maintain-resolution' | undefined;
}

/** What the server is told a track carries (docs/protocol/media.md, "publish"). */
export function wireSource(kind: 'audio' | 'video', plan: SendPlan): StreamSource {
  if (plan.source === 'screen') return kind === 'audio' ? 'screen_share_audio' : 'screen_share';
  return plan.source;
}

/** Decides how a track is sent; throws TypeError for options that are not valid. */
export function planSend(track: MediaStreamTrackLike, options: PublishTrackOptions): SendPlan {
  const { source, simulcast } = options;
  if (source !== undefined && source !== 'camera' && source !== 'screen') throw new TypeError('source must be "camera" or "screen"');
  if (simulcast !== undefined && typeof simulcast !== 'boolean' && !Array.isArray(simulcast)) {
    throw new TypeError('simulcast must be a boolean or an array of layers');
  }
  if (track.kind !== 'video') {
    return { source: source === 'screen' ? 'screen' : 'microphone', encodings: undefined, contentHint: undefined, degradationPreference: undefined };
  }
  const screen = source === 'screen' || (source === undefined && isScreenCapture(track));
  const settings = typeof track.getSettings === 'function' ? track.getSettings() : {};
  const defaults = (): readonly VideoLayer[] => defaultVideoLayers(settings.width ?? 0, settings.height ?? 0);
  const layers = simulcast === undefined ? (screen ? undefined : defaults())
    : simulcast === true ? defaults() : simulcast === false ? undefined : checkLayers(simulcast);
  return {
    source: screen ? 'screen' : 'camera',
    encodings: layers && encodingsOf(layers),
    contentHint: screen ? 'detail' : undefined,
    degradationPreference: screen ? 'maintain-resolution' : undefined,
  };
}

/** A track of `getDisplayMedia`: its settings name the captured surface. */
function isScreenCapture(track: MediaStreamTrackLike): boolean {
  const surface = typeof track.getSettings === 'function' ? track.getSettings().displaySurface : undefined;
  return typeof surface === 'string' && surface !== '';
}

function checkLayers(layers: readonly VideoLayer[]): readonly VideoLayer[] {
  if (layers.length < 1 || layers.length > MAX_SIMULCAST_LAYERS) throw new TypeError(`simulcast takes 1 to ${MAX_SIMULCAST_LAYERS} layers`);
  let previous = Number.POSITIVE_INFINITY;
  for (const layer of layers) {
    const { scaleResolutionDownBy: scale, maxBitrate, maxFramerate } = layer ?? {};
    if (typeof scale !== 'number' || !Number.isFinite(scale) || scale < 1) throw new TypeError('scaleResolutionDownBy must be a number of at least 1');
    if (!Number.isInteger(maxBitrate) || maxBitrate <= 0) throw new TypeError('maxBitrate must be a positive integer (bits per second)');
    if (maxFramerate !== undefined && !(typeof maxFramerate === 'number' && maxFramerate > 0)) throw new TypeError('maxFramerate must be a positive number');
    // the server ranks layers in the order of the offer: smallest first
    if (scale > previous) throw new TypeError('simulcast layers go from the smallest to the largest');
    previous = scale;
  }
  return layers;
}

function encodingsOf(layers: readonly VideoLayer[]): RtpEncodingLike[] {
  const rids = RIDS.slice(RIDS.length - layers.length);
  return layers.map((layer, i) => ({
    // one layer is not simulcast: no rid
    ...(layers.length > 1 ? { rid: rids[i] } : {}),
    scaleResolutionDownBy: layer.scaleResolutionDownBy,
    maxBitrate: layer.maxBitrate,
    ...(layer.maxFramerate !== undefined ? { maxFramerate: layer.maxFramerate } : {}),
  }));
}
