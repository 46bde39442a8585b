/**
 * The camera-like RTP load of the media benchmarks (webrtc-fanout, media-relay-hop): a video of
 * 1,100-byte packets at 170/s and Opus-sized audio at 50/s, sent paced against the clock, and the
 * wait until what arrives keeps up with it.
 */
import { RtcClient } from '../../server/src/main/client/media/rtc-client.ts';
import { feedbackPeerConfig } from '../../server/src/main/client/media/transport-feedback.ts';
import type { WireCredentials } from '../../server/src/main/client/media/wire-client.ts';

export const VIDEO = { streamId: 1, bytes: 1100, perSecond: 170 } as const;
export const AUDIO = { streamId: 2, bytes: 160, perSecond: 50 } as const;
/** How long a room may take to carry the offered load before it is measured anyway. */
export const SETTLE_SECONDS = 30;

export interface CameraLoad {
  sendVideo(): void;
  sendAudio(): void;
  /** Packets received so far by every subscriber together. */
  received(): number;
}

/** Sends the load until stopped, paced against the clock (a late timer sends what fell due). */
export function startCameraLoad(load: CameraLoad): () => Promise<void> {
  const started = performance.now();
  let video = 0;
  let audio = 0;
  let running = true;
  const done = (async () => {
    while (running) {
      const elapsed = (performance.now() - started) / 1000;
      for (; video < Math.floor(elapsed * VIDEO.perSecond); video++) load.sendVideo();
      for (; audio < Math.floor(elapsed * AUDIO.perSecond); audio++) load.sendAudio();
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  return async () => {
    running = false;
    await done;
  };
}

/**
 * Waits until two seconds in a row deliver at least 97 % of the offered load each (one could be
 * the burst of a queue let go); false after SETTLE_SECONDS.
 */
export async function settle(load: CameraLoad, offered: number): Promise<boolean> {
  const deadline = performance.now() + SETTLE_SECONDS * 1000;
  let full = 0;
  while (performance.now() < deadline) {
    const from = { received: load.received(), at: performance.now() };
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const rate = (load.received() - from.received) / ((performance.now() - from.at) / 1000);
    full = rate >= 0.97 * offered ? full + 1 : 0;
    if (full === 2) return true;
  }
  return false;
}

/**
 * A werift publisher of the camera's two streams, joined with `token` at the media URL, published
 * and negotiated, its peer connection connected; closed again if any step fails.
 */
export async function joinCameraPublisher(url: string, token: { readonly media: WireCredentials }): Promise<RtcClient> {
  const publisher = await RtcClient.join(url, token, { keepPayloads: false, peer: feedbackPeerConfig() });
  try {
    for (const [id, kind] of [[VIDEO.streamId, 'video'], [AUDIO.streamId, 'audio']] as const) {
      const reply = await publisher.publish(id, kind);
      if (reply.type !== 'published') throw new Error(`publish: ${JSON.stringify(reply)}`);
    }
    const sent = await publisher.negotiate([
      { streamId: VIDEO.streamId, kind: 'video', direction: 'send' }, { streamId: AUDIO.streamId, kind: 'audio', direction: 'send' },
    ]);
    if (sent.refused.length > 0) throw new Error(`the publisher's m-lines were refused: ${sent.refused.join(', ')}`);
    await publisher.waitConnected();
    return publisher;
  } catch (err) {
    await publisher.close();
    throw err;
  }
}
