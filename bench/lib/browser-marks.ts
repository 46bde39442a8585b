/**
 * What the webrtc-browser bench records inside each page (Chromium or Firefox), installed after
 * the page's own script (test/helpers/webrtc-page.ts): the first decoded frame of each remote
 * video, the session's `trackUnsubscribed` and `revoked`, and the phases of a join, each at the
 * page's clock (performance.timeOrigin + performance.now(), ms since the epoch).
 */

/** The moments of a join, first occurrence of each (page clock); undefined when it did not happen. */
export interface JoinPhases {
  /** `connect` called. */
  readonly startedAt: number;
  /** The peer connection made (the SDK makes it while the WebSocket opens). */
  readonly pc?: number;
  /** `connect` resolved: the media connection joined. */
  readonly joined?: number;
  /** The first offer with a receiving m-line given to `setLocalDescription`. */
  readonly offer?: number;
  /** Its answer received (given to `setRemoteDescription`). */
  readonly answerIn?: number;
  /** Its answer applied (`setRemoteDescription` resolved). */
  readonly answer?: number;
  /** ICE connected (`iceConnectionState` connected or completed). */
  readonly ice?: number;
  /** DTLS done (`connectionState` connected). */
  readonly dtls?: number;
  /** The first RTP packet of a remote video counted (inbound-rtp `packetsReceived`, polled). */
  readonly firstRtp?: number;
  /** The first frame decoded by the receiver (inbound-rtp `framesDecoded`, polled): a key frame. */
  readonly firstKeyFrame?: number;
  /** Key frame requests the receiver had sent when it decoded its first frame (PLI + FIR). */
  readonly keyFrameRequests?: number;
}

/** What one page recorded (times on the page's clock, ms since the epoch). */
export interface PageMarks {
  readonly frames: readonly {
    readonly userId: string; readonly streamId: number; readonly kind: string;
    readonly subscribedAt: number; readonly firstFrameAt: number | undefined;
  }[];
  readonly unsubscribed: readonly { readonly userId: string; readonly streamId: number; readonly kind: string; readonly at: number }[];
  readonly revoked: {
    readonly at: number; readonly remoteTracks: number; readonly tracksEnded: number; readonly tracksEndedAt: number | undefined;
    readonly lastUnsubscribedAt: number | undefined; readonly mediaClosedAt: number | undefined;
  } | undefined;
  readonly phases: JoinPhases | undefined;
}

/** The phases of the bench's JSON, each in ms from `connect` (cumulative), as the task of each stage ends. */
export const PHASES = ['signaling', 'offer', 'answer_received', 'answer', 'ice', 'dtls', 'first_rtp', 'first_key_frame', 'first_decoded'] as const;
export type Phase = (typeof PHASES)[number];

/** A join's phases in ms from `connect`: `signaling` is `connect` resolved; `first_decoded` the first frame shown. */
export function phasesOf(p: JoinPhases, firstDecodedAt: number): Partial<Record<Phase, number>> {
  const since = (at: number | undefined): number | undefined => (at === undefined ? undefined : at - p.startedAt);
  const all: Record<Phase, number | undefined> = {
    signaling: since(p.joined), offer: since(p.offer), answer_received: since(p.answerIn), answer: since(p.answer), ice: since(p.ice), dtls: since(p.dtls),
    first_rtp: since(p.firstRtp), first_key_frame: since(p.firstKeyFrame), first_decoded: since(firstDecodedAt),
  };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined));
}

/**
 * Installed in each page after the page's own script: watches the `<video>` elements the page
 * adds on `trackSubscribed` (a MutationObserver runs before the next frame can be rendered) and
 * times their first decoded frame; records the session's `trackUnsubscribed`, `revoked` and
 * peer connection state with their times. The peer connections the SDK makes are watched for the
 * phases of the join (the SDK reads `RTCPeerConnection` from the page's globals when it makes one);
 * with `pollStats`, the statistics are polled every 10 ms from `connect` until the first frame is
 * decoded (for `first_rtp` and `first_key_frame`; a cost to the page while it joins).
 */
export const instrument = (pollStats: boolean): string => `(() => {
  const pollStats = ${String(pollStats)};
  const now = () => performance.timeOrigin + performance.now();
  const frames = [];
  const unsubscribed = [];
  const remote = [];
  let revoked;
  let mediaClosedAt;
  let phases;
  const mark = (name) => { if (phases && phases[name] === undefined) phases[name] = now(); };
  const Native = globalThis.RTCPeerConnection;
  globalThis.RTCPeerConnection = class extends Native {
    constructor(...args) {
      super(...args);
      mark('pc');
      this.addEventListener('iceconnectionstatechange', () => {
        if (this.iceConnectionState === 'connected' || this.iceConnectionState === 'completed') mark('ice');
      });
      this.addEventListener('connectionstatechange', () => { if (this.connectionState === 'connected') mark('dtls'); });
      const poll = async () => {
        if (!phases || phases.firstKeyFrame !== undefined || this.connectionState === 'closed') return;
        const report = await this.getStats();
        for (const s of report.values()) {
          if (s.type !== 'inbound-rtp' || s.kind !== 'video') continue;
          if ((s.packetsReceived ?? 0) > 0) mark('firstRtp');
          if ((s.framesDecoded ?? 0) > 0 && phases.firstKeyFrame === undefined) {
            phases.keyFrameRequests = (s.pliCount ?? 0) + (s.firCount ?? 0);
            mark('firstKeyFrame');
          }
        }
        setTimeout(poll, 10);
      };
      if (pollStats) setTimeout(poll, 10);
    }
    async setLocalDescription(description) {
      const result = await super.setLocalDescription(description);
      if (this.getTransceivers().some((t) => t.direction === 'recvonly' && t.receiver.track.kind === 'video')) mark('offer');
      return result;
    }
    async setRemoteDescription(description) {
      if (phases && phases.offer !== undefined) mark('answerIn');
      const result = await super.setRemoteDescription(description);
      if (phases && phases.offer !== undefined) mark('answer');
      return result;
    }
  };
  new MutationObserver((records) => {
    for (const record of records) for (const node of record.addedNodes) {
      if (!(node instanceof HTMLVideoElement)) continue;
      const track = [...globalThis.rtc.state.tracks.values()].find((t) => t.el === node);
      const mark = { userId: track ? track.userId : '', streamId: track ? track.streamId : 0, kind: 'video', subscribedAt: track ? track.at : now(), firstFrameAt: undefined };
      frames.push(mark);
      node.requestVideoFrameCallback(() => { mark.firstFrameAt = now(); });
    }
  }).observe(document.body, { childList: true });
  globalThis.bench = {
    async join(token) {
      const startedAt = now();
      phases = { startedAt };
      const joined = await globalThis.rtc.join(token);
      const joinedAt = now();
      phases.joined = joinedAt;
      const session = globalThis.rtc.state.session;
      session.on('trackSubscribed', (t) => remote.push(t.track));
      session.on('trackUnsubscribed', (t) => unsubscribed.push({ userId: t.userId, streamId: t.streamId, kind: t.kind, at: now() }));
      session.on('mediaConnectionState', (s) => { if (s.state === 'closed') mediaClosedAt = now(); });
      session.on('revoked', () => {
        const at = now();
        const mark = {
          at, remoteTracks: remote.length, tracksEnded: remote.filter((t) => t.readyState === 'ended').length, tracksEndedAt: undefined,
          lastUnsubscribedAt: unsubscribed.length > 0 ? unsubscribed[unsubscribed.length - 1].at : undefined, mediaClosedAt,
        };
        // a browser may end the remote tracks of a closed peer connection a task later: poll until they all are
        const check = () => {
          if (remote.every((t) => t.readyState === 'ended')) mark.tracksEndedAt = now();
          else if (now() - at < 5000) setTimeout(check, 0);
          else revoked = mark;
          if (mark.tracksEndedAt !== undefined) revoked = mark;
        };
        check();
      });
      return { startedAt, joinedAt, webrtc: joined.webrtc };
    },
    marks() {
      return { frames: frames.map((f) => ({ ...f })), unsubscribed: [...unsubscribed], revoked, phases: phases && { ...phases } };
    },
  };
})();`;
