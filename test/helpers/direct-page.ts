/**
 * A page for direct calls between browsers, without the platform: the test process carries the
 * signaling (`direct.offer` in one page, `direct.answer` in the other, `direct.accept` back), each
 * page relay-only through the ICE servers it is given. It sends as the app SDK does (one
 * `sendonly` transceiver per track, one layer, the browser's default encoder settings) but offers
 * VP8 as the only video codec, the platform's; the rest is what a browser-to-browser call
 * negotiates by itself (transport-wide congestion control, RTX, RED/ULPFEC). Its script runs in
 * the page as it is written here.
 */
import type { PageCamera } from './webrtc-page.ts';

export const DIRECT_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>rtc direct call</title></head>
<body><script type="module">
const state = { peers: new Map(), media: undefined, remote: [] };
const gathered = (pc) => new Promise((resolve) => {
  if (pc.iceGatheringState === 'complete') return resolve();
  const timer = setTimeout(resolve, 10000);
  pc.addEventListener('icegatheringstatechange', () => {
    if (pc.iceGatheringState !== 'complete') return;
    clearTimeout(timer);
    resolve();
  });
});
const open = (id, iceServers) => {
  if (state.peers.has(id)) throw new Error('a peer connection ' + id + ' exists already');
  const pc = new RTCPeerConnection({ iceServers, iceTransportPolicy: 'relay', bundlePolicy: 'max-bundle', rtcpMuxPolicy: 'require' });
  pc.addEventListener('track', (e) => {
    const el = document.createElement(e.track.kind);
    el.autoplay = true;
    el.playsInline = true;
    el.srcObject = new MediaStream([e.track]);
    document.body.append(el);
    el.play().catch(() => undefined);
    state.remote.push({ peer: id, kind: e.track.kind, track: e.track, el });
  });
  state.peers.set(id, pc);
  globalThis.callQuality?.watch(id, () => pc.getStats());
  return pc;
};
// VP8 only, as the platform takes; retransmission and FEC entries stay, as a browser offers them
const videoCodecs = () => RTCRtpReceiver.getCapabilities('video').codecs.filter((c) => !/^video\\/(VP9|H264|H265|AV1)$/i.test(c.mimeType));
globalThis.direct = {
  state,
  async camera(camera) {
    state.media ??= await navigator.mediaDevices.getUserMedia({ video: camera, audio: true });
    return state.media.getTracks().map((t) => t.kind);
  },
  async offer(id, iceServers) {
    const pc = open(id, iceServers);
    for (const track of state.media?.getTracks() ?? []) {
      const transceiver = pc.addTransceiver(track, { direction: 'sendonly' });
      if (track.kind === 'video') transceiver.setCodecPreferences(videoCodecs());
    }
    await pc.setLocalDescription();
    await gathered(pc);
    return pc.localDescription.sdp;
  },
  async answer(id, iceServers, sdp) {
    const pc = open(id, iceServers);
    await pc.setRemoteDescription({ type: 'offer', sdp });
    await pc.setLocalDescription();
    await gathered(pc);
    return pc.localDescription.sdp;
  },
  async accept(id, sdp) {
    await state.peers.get(id).setRemoteDescription({ type: 'answer', sdp });
  },
  connectionStates() {
    return Object.fromEntries([...state.peers].map(([id, pc]) => [id, pc.connectionState]));
  },
  close() {
    for (const pc of state.peers.values()) pc.close();
    for (const track of state.media?.getTracks() ?? []) track.stop();
  },
};
</script></body></html>
`;

/** An ICE server as RTCPeerConnection takes it. */
export interface PageIceServer {
  readonly urls: string | readonly string[];
  readonly username?: string;
  readonly credential?: string;
}

/** The page's `direct` object, as the harness calls it through `page.evaluate`. */
export interface PageDirect {
  /** Opens the fake camera and microphone once; the tracks' kinds. */
  camera(camera: PageCamera): Promise<string[]>;
  /** A peer connection `id` sending the camera and microphone; the offer, candidates gathered. */
  offer(id: string, iceServers: readonly PageIceServer[]): Promise<string>;
  /** A peer connection `id` receiving what the offer sends; the answer, candidates gathered. */
  answer(id: string, iceServers: readonly PageIceServer[], sdp: string): Promise<string>;
  accept(id: string, sdp: string): Promise<void>;
  connectionStates(): Record<string, string>;
  close(): void;
}
