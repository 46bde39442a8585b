/**
 * What the peer connection sets on its senders and transceivers: the codecs the server takes, and
 * a sender's layer size, caps and degradation preference.
 */
import { browserWebRtc, type MediaStreamTrackLike, type MediaTrackKind, type RtpEncodingLike, type RtpSenderLike, type RtpTransceiverLike } from './dom.ts';

/** The largest layer alone: no rid, its size and caps. */
export function oneLayer(largest: RtpEncodingLike): RtpEncodingLike {
  const layer: RtpEncodingLike = {};
  if (largest.scaleResolutionDownBy !== undefined) layer.scaleResolutionDownBy = largest.scaleResolutionDownBy;
  if (largest.maxBitrate !== undefined) layer.maxBitrate = largest.maxBitrate;
  if (largest.maxFramerate !== undefined) layer.maxFramerate = largest.maxFramerate;
  return layer;
}

/**
 * Sets a sender's parameters in one change (the browser takes one `setParameters` per
 * `getParameters`): the size and caps of `layer` on its first encoding, for a one-layer video or one
 * whose answer declined simulcast (the browser then keeps the first encoding, the smallest layer;
 * it becomes the largest one instead, so that the single layer sent is the best); and a screen's
 * degradation preference, to keep its resolution when bandwidth drops (frames go first).
 */
export async function tuneSender(sender: RtpSenderLike, tuning: {
  readonly layer?: RtpEncodingLike | undefined; readonly degradationPreference?: 'maintain-resolution' | undefined;
}): Promise<void> {
  const { layer, degradationPreference } = tuning;
  if ((!layer && !degradationPreference) || typeof sender.getParameters !== 'function' || typeof sender.setParameters !== 'function') return;
  try {
    const parameters = sender.getParameters();
    const [first] = parameters.encodings;
    if (layer && first) {
      if (layer.scaleResolutionDownBy !== undefined) first.scaleResolutionDownBy = layer.scaleResolutionDownBy;
      if (layer.maxBitrate !== undefined) first.maxBitrate = layer.maxBitrate;
      if (layer.maxFramerate !== undefined) first.maxFramerate = layer.maxFramerate;
    }
    if (degradationPreference) parameters.degradationPreference = degradationPreference;
    await sender.setParameters(parameters);
  } catch {
    // an older browser: its own defaults
  }
}

/**
 * Sends or rests each simulcast layer of a sender as the server says some subscriber needs it
 * (docs/protocol/media.md, "publish_layers"): `active[i]` for the i-th encoding, smallest first as
 * they were given; a layer it does not name is sent. A sender of one encoding (simulcast declined)
 * is left alone: its one layer is always needed.
 */
export async function setLayersActive(sender: RtpSenderLike, active: readonly boolean[]): Promise<void> {
  if (typeof sender.getParameters !== 'function' || typeof sender.setParameters !== 'function') return;
  try {
    const parameters = sender.getParameters();
    if (parameters.encodings.length < 2) return;
    let changed = false;
    parameters.encodings.forEach((encoding, i) => {
      const on = active[i] ?? true;
      if ((encoding.active ?? true) === on) return;
      encoding.active = on;
      changed = true;
    });
    if (changed) await sender.setParameters(parameters);
  } catch {
    // a browser that cannot: every layer goes on being sent, as before
  }
}

/** The codecs the server negotiates (docs/protocol/media.md, 10.3), and the retransmission format of VP8. */
const SERVER_CODECS: Readonly<Record<MediaTrackKind, readonly string[]>> = { audio: ['audio/opus'], video: ['video/vp8', 'video/rtx'] };

/**
 * Offers only what the server takes: every other codec (VP9, H.264, AV1, RED, FEC...) would be
 * refused anyway, and costs some 2 KB of SDP per video m-line; m-lines accumulate (one per stream)
 * and an offer must fit in 60,000 characters.
 */
export function preferServerCodecs(transceiver: RtpTransceiverLike, kind: MediaTrackKind): void {
  const capabilities = browserWebRtc().RTCRtpReceiver?.getCapabilities?.(kind);
  if (!capabilities || typeof transceiver.setCodecPreferences !== 'function') return;
  const codecs = capabilities.codecs.filter((c) => SERVER_CODECS[kind].includes(c.mimeType.toLowerCase()));
  if (!codecs.some((c) => !c.mimeType.toLowerCase().endsWith('/rtx'))) return;
  try {
    transceiver.setCodecPreferences(codecs);
  } catch {
    // the browser's own list: larger offers, same answer
  }
}

export function kindOf(track: MediaStreamTrackLike): MediaTrackKind {
  if (track.kind !== 'audio' && track.kind !== 'video') throw new TypeError('the track must be an audio or video MediaStreamTrack');
  return track.kind;
}
