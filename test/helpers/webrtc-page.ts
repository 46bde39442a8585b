/**
 * A page for the WebRTC browser tests and benchmarks: joins with the bundled app SDK, publishes
 * the fake camera (at a chosen size, simulcast or not) and microphone, plays every remote track in
 * a `<video>`/`<audio>` element (`RemoteTrack.attach`), records the server's reports on each remote
 * video (`streamPaused`, `streamResumed`, `streamLayer`), sets video bounds, and measures what was
 * really encoded and decoded. Its script runs in the page as it is written here.
 */
import type { TokenResponse } from '@rtc/protocol';

export const WEBRTC_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>rtc webrtc test</title></head>
<body><canvas id="probe" width="64" height="48"></canvas><script type="module">
import * as sdk from './sdk.js';
const state = { session: undefined, tracks: new Map(), events: [], revokedAt: undefined, disconnectedAt: undefined, published: [], videoReports: [] };
const now = () => performance.timeOrigin + performance.now();
globalThis.rtc = {
  state,
  async join(token, webrtc, options = {}) {
    const { url, renewBeforeSeconds, tokens, adaptiveStream } = options;
    const session = await sdk.connect({
      token, secure: false, ...(webrtc ? { webrtc } : {}), ...(url ? { url } : {}),
      ...(renewBeforeSeconds !== undefined ? { renewBeforeSeconds } : {}), ...(adaptiveStream ? { adaptiveStream } : {}),
      // with tokens, fresh ones come from the test (exposed as nextToken): renewal and reconnection
      ...(tokens ? { getToken: () => globalThis.nextToken(), reconnect: { initialDelayMs: 50 } } : { reconnect: false }),
    });
    state.session = session;
    session.on('trackSubscribed', (t) => {
      const el = document.createElement(t.kind);
      el.autoplay = true;
      el.playsInline = true;
      if (t.kind === 'video') Object.assign(el.style, { width: '320px', height: '180px' });
      t.attach(el);
      document.body.append(el);
      el.play().catch(() => undefined);
      state.tracks.set(t.streamId, Object.assign(t, { el, at: now() }));
      state.events.push('trackSubscribed:' + t.streamId + ':' + t.kind + ':' + t.userId);
    });
    session.on('trackUnsubscribed', (t) => {
      state.tracks.get(t.streamId)?.el.remove();
      state.tracks.delete(t.streamId);
      state.events.push('trackUnsubscribed:' + t.streamId);
    });
    session.on('revoked', () => { state.revokedAt = now(); });
    session.on('disconnected', () => { state.disconnectedAt = now(); });
    session.on('renewed', () => state.events.push('renewed'));
    session.on('reconnected', () => state.events.push('reconnected'));
    session.on('mediaError', (e) => state.events.push('mediaError:' + e.error.code + ':' + e.error.message + ':' + String(e.error.cause)));
    session.on('localStreamEnded', (e) => state.events.push('localStreamEnded:' + e.streamId + ':' + e.error.code));
    session.on('streamPaused', (e) => state.videoReports.push({ type: 'streamPaused', ...e }));
    session.on('streamResumed', (e) => state.videoReports.push({ type: 'streamResumed', ...e }));
    session.on('streamLayer', (e) => state.videoReports.push({ type: 'streamLayer', ...e }));
    return { participantId: session.participantId, webrtc: session.webrtcEnabled };
  },
  async publish(kinds, streamIds, options = {}) {
    const { width = 320, height = 240, frameRate = 15 } = options.video ?? {};
    const media = await navigator.mediaDevices.getUserMedia({
      video: kinds.includes('video') ? { width, height, frameRate } : false,
      audio: kinds.includes('audio'),
    });
    const out = [];
    for (const [i, kind] of kinds.entries()) {
      const track = kind === 'video' ? media.getVideoTracks()[0] : media.getAudioTracks()[0];
      const publishOptions = {
        ...(streamIds ? { streamId: streamIds[i] } : {}),
        ...(kind === 'video' && options.simulcast !== undefined ? { simulcast: options.simulcast } : {}),
        ...(kind === 'video' && options.source !== undefined ? { source: options.source } : {}),
      };
      try {
        const local = await state.session.publishTrack(track, publishOptions);
        state.published.push(local);
        out.push({ ok: true, streamId: local.streamId, kind: local.kind });
      } catch (err) {
        out.push({ ok: false, code: err.code ?? String(err) });
      }
    }
    return out;
  },
  /** Publishes and unpublishes the microphone as \`streamId\` \`times\` times: each time a new m-line. */
  async churn(streamId, times) {
    const media = await navigator.mediaDevices.getUserMedia({ audio: true });
    const track = media.getAudioTracks()[0];
    for (let i = 0; i < times; i++) {
      const local = await state.session.publishTrack(track.clone(), { streamId });
      await local.unpublish();
    }
    track.stop();
  },
  /** Bounds on a remote video: through its track once it is there, through the session before. */
  setVideoBounds(streamId, bounds) {
    const t = state.tracks.get(streamId);
    if (t) t.setVideoBounds(bounds);
    else state.session.setVideoBounds(streamId, bounds);
  },
  /** Resizes (or hides, with 0) the element of a remote video. */
  resizeVideo(streamId, width, height) {
    const el = state.tracks.get(streamId)?.el;
    if (!el) throw new Error('no element for stream ' + streamId);
    if (width === 0 || height === 0) el.style.display = 'none';
    else Object.assign(el.style, { display: '', width: width + 'px', height: height + 'px' });
  },
  /** What this page encodes: each outbound video encoding (a simulcast layer has a rid). */
  async sent() {
    const stats = state.session ? await state.session.getStats() : [];
    return stats.filter((s) => s.type === 'outbound-rtp' && s.kind === 'video').map((s) => ({
      rid: s.rid, framesEncoded: s.framesEncoded ?? 0, frameWidth: s.frameWidth ?? 0, frameHeight: s.frameHeight ?? 0, active: s.active !== false,
    })).sort((a, b) => String(a.rid).localeCompare(String(b.rid)));
  },
  /** What was decoded: per remote video, frames and the mean brightness of a canvas sample; per remote audio, the energy. */
  async measure() {
    const stats = state.session ? await state.session.getStats() : [];
    const inbound = stats.filter((s) => s.type === 'inbound-rtp');
    const pair = stats.find((s) => s.type === 'candidate-pair' && s.nominated && s.state === 'succeeded');
    const local = pair ? stats.find((s) => s.id === pair.localCandidateId) : undefined;
    const remote = [];
    for (const t of state.tracks.values()) {
      const s = inbound.find((i) => i.trackIdentifier === t.track.id) ?? {};
      let brightness = 0;
      if (t.kind === 'video' && t.el.videoWidth > 0) {
        const ctx = document.getElementById('probe').getContext('2d', { willReadFrequently: true });
        ctx.drawImage(t.el, 0, 0, 64, 48);
        const px = ctx.getImageData(0, 0, 64, 48).data;
        let sum = 0;
        for (let i = 0; i < px.length; i += 4) sum += px[i] + px[i + 1] + px[i + 2];
        brightness = sum / (px.length / 4) / 3;
      }
      remote.push({
        streamId: t.streamId, kind: t.kind, userId: t.userId, readyState: t.track.readyState,
        framesDecoded: s.framesDecoded ?? 0, packetsReceived: s.packetsReceived ?? 0,
        audioLevel: s.audioLevel ?? 0, totalAudioEnergy: s.totalAudioEnergy ?? 0, brightness,
        totalSamplesReceived: s.totalSamplesReceived ?? 0, concealedSamples: s.concealedSamples ?? 0,
        frameWidth: s.frameWidth ?? 0, frameHeight: s.frameHeight ?? 0, paused: t.paused, layer: t.layer ?? null,
      });
    }
    const e2ee = state.session ? await state.session.e2eeStats() : undefined;
    return {
      remote, e2ee, candidateType: local?.candidateType,
      inboundPackets: inbound.reduce((n, s) => n + (s.packetsReceived ?? 0), 0),
      sessionState: state.session?.state, events: state.events, revokedAt: state.revokedAt, disconnectedAt: state.disconnectedAt,
      videoReports: state.videoReports,
    };
  },
};
</script></body></html>
`;

/** What `rtc.measure()` returns. */
export interface PageMeasure {
  readonly remote: readonly {
    readonly streamId: number; readonly kind: string; readonly userId: string; readonly readyState: string;
    readonly framesDecoded: number; readonly packetsReceived: number; readonly audioLevel: number;
    readonly totalAudioEnergy: number; readonly brightness: number;
    /** Audio: samples played out, and those of them the decoder made up for missing packets. */
    readonly totalSamplesReceived: number; readonly concealedSamples: number;
    /** Size of the last decoded frame (video). */
    readonly frameWidth: number; readonly frameHeight: number;
    /** The remote track's `paused` and `layer`. */
    readonly paused: boolean; readonly layer: { readonly layer: number; readonly width: number; readonly height: number } | null;
  }[];
  readonly e2ee: { readonly encrypted: number; readonly decrypted: number; readonly dropped: number } | undefined;
  readonly candidateType: string | undefined;
  readonly inboundPackets: number;
  readonly sessionState: string | undefined;
  readonly events: readonly string[];
  readonly revokedAt: number | undefined;
  readonly disconnectedAt: number | undefined;
  /** `streamPaused`, `streamResumed` and `streamLayer` events, in order, with their payloads. */
  readonly videoReports: readonly ({ readonly type: 'streamPaused' | 'streamResumed' | 'streamLayer'; readonly streamId: number } & Record<string, unknown>)[];
}

/** How `rtc.publish` captures and sends video: the fake camera's size (default 320x240 at 15 fps), simulcast, source. */
export interface PagePublishOptions {
  readonly video?: Partial<PageCamera>;
  readonly simulcast?: boolean;
  readonly source?: 'camera' | 'screen';
}

/** One outbound video encoding of the page (`rtc.sent`). */
export interface PageEncoding {
  readonly rid: string | undefined;
  readonly framesEncoded: number;
  readonly frameWidth: number;
  readonly frameHeight: number;
  readonly active: boolean;
}

/** How `rtc.join` connects: through `url`, renewing early, with fresh tokens from the page's `nextToken()`, with adaptive video. */
export interface PageJoinOptions {
  readonly url?: string;
  readonly renewBeforeSeconds?: number;
  readonly tokens?: boolean;
  readonly adaptiveStream?: boolean;
}

/** The camera a page asks getUserMedia for. */
export interface PageCamera {
  readonly width: number;
  readonly height: number;
  readonly frameRate: number;
}

/** The page's `rtc` object, as the tests call it through `page.evaluate`. */
export interface PageRtc {
  join(token: TokenResponse, webrtc?: { readonly iceTransportPolicy?: 'all' | 'relay' }, options?: PageJoinOptions): Promise<{ participantId: string; webrtc: boolean }>;
  publish(kinds: readonly ('audio' | 'video')[], streamIds?: readonly number[], options?: PagePublishOptions):
    Promise<{ ok: boolean; streamId?: number; kind?: string; code?: string }[]>;
  setVideoBounds(streamId: number, bounds: { maxWidth?: number | null; maxHeight?: number | null; maxLayer?: number | null } | null): void;
  churn(streamId: number, times: number): Promise<void>;
  resizeVideo(streamId: number, width: number, height: number): void;
  sent(): Promise<PageEncoding[]>;
  measure(): Promise<PageMeasure>;
}
