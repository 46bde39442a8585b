/**
 * A session's audio and video over WebRTC: the tracks it publishes, the remote streams it
 * receives, and the peer connection of the current media connection (a new one after each
 * reconnection). The session tells it what the server said; it tells the application through
 * the session's events.
 */
import { MAX_SDP_CHARS, type RtcTrack, type RtcVideoPreference } from '@rtc/protocol';
import type { ServerMessage } from '../connection.ts';
import { MediaError } from '../errors.ts';
import type { SecretKey } from '../crypto.ts';
import type { MediaSessionEvents, MediaToken, RemoteStream, StreamSource, WebRtcOptions } from '../types.ts';
import { browserWebRtc, type IceServer, type MediaElementLike, type MediaStreamTrackLike, type MediaTrackKind } from './dom.ts';
import { LocalTrack, type LocalTrackOwner } from './local-track.ts';
import { Peer, webRtcAvailable, type PeerHost, type QualityReport, type ReceiveSlot } from './peer.ts';
import { planSend, wireSource, type PublishTrackOptions } from './publish-plan.ts';
import { ReceivedVideo, type VideoReport } from './received-video.ts';
import { RemoteTrack, type RemoteTrackOwner } from './remote-track.ts';
import { realScheduler, type ResolvedBounds, type Scheduler } from './video-bounds.ts';
import type { E2eeStats } from './e2ee-worker.ts';

export type { PublishTrackOptions };

/** What the media part asks of its session. */
export interface MediaHost {
  /** A request on the current connection; rejects with the server's error as a `MediaError`. */
  request(body: { readonly type: 'rtc_offer'; readonly sdp: string; readonly tracks: readonly RtcTrack[]; readonly new_connection?: boolean }): Promise<ServerMessage>;
  /** A control message without reply on the current connection; false when there is none. */
  notify(message: RtcVideoPreference): boolean;
  /** `publish` on the server, resolving once its key is in hand. */
  publish(streamId: number, kind: MediaTrackKind, source: StreamSource): Promise<void>;
  unpublish(streamId: number): Promise<void>;
  emit<K extends keyof MediaSessionEvents>(type: K, payload: MediaSessionEvents[K]): void;
}

/** How the session's media part is set up, from `connect`'s options. */
export interface MediaSettings {
  readonly webrtc: boolean | WebRtcOptions | undefined;
  /** Bound each received video by the elements it is attached to. */
  readonly adaptiveStream: boolean;
  /** Timers of bounds and adaptive video; injectable for tests. */
  readonly scheduler?: Scheduler;
}

/** m-lines a peer connection may reach before the next change starts a fresh one (the server takes 64 in all). */
const MLINE_BUDGET = 56;

interface KeyRecord {
  readonly epoch: number;
  readonly key: SecretKey;
}

export class SessionMedia implements LocalTrackOwner, RemoteTrackOwner {
  private readonly host: MediaHost;
  private readonly options: WebRtcOptions | undefined;
  readonly enabled: boolean;
  private peer: Peer | undefined;
  /** A peer connection made while the media connection joins, for the token it joins with. */
  private prepared: { readonly token: MediaToken; readonly peer: Peer } | undefined;
  private iceServers: readonly IceServer[] = [];
  private readonly tracks = new Map<number, LocalTrack>();
  /** Remote audio and video streams received, as they were when reception started. */
  private readonly receiving = new Map<number, RemoteStream>();
  /** The last two keys of each stream, by direction: what a fresh peer connection's worker is given. */
  private readonly keys = new Map<string, KeyRecord[]>();
  /** Peer connections made so far: each numbers its frames past the previous one's. */
  private generation = 0;
  /** Remote tracks announced to the application, by stream id. */
  private readonly remoteTracks = new Map<number, RemoteTrack>();
  /** What the server said of each received video, its bounds, and adaptive video's watches. */
  private readonly video: ReceivedVideo;

  constructor(host: MediaHost, settings: MediaSettings) {
    this.host = host;
    const options = settings.webrtc;
    this.enabled = options !== false && webRtcAvailable();
    this.options = typeof options === 'object' ? options : undefined;
    this.video = new ReceivedVideo({
      emit: (type, payload) => this.host.emit(type, payload),
      remoteTrack: (streamId) => this.remoteTracks.get(streamId),
    }, settings.adaptiveStream, settings.scheduler ?? realScheduler);
  }

  /** Tracks published now. */
  localTracks(): LocalTrack[] {
    return [...this.tracks.values()];
  }

  /**
   * A media connection is about to open with this token: its peer connection is made now and starts
   * gathering ICE candidates while the socket opens and joins, so the first offer need not wait.
   */
  prepare(token: MediaToken): void {
    this.prepared?.peer.close();
    this.prepared = undefined;
    if (!this.enabled) return;
    const peer = this.newPeer(iceServersOf(token, this.options));
    try {
      peer.warm();
    } catch {
      // made again (and failing with its error) when the connection needs it
    }
    this.prepared = { token, peer };
  }

  /** A new media connection: a new peer connection will carry its media. */
  attach(token: MediaToken): void {
    this.peer?.close();
    this.keys.clear();
    this.video.reset();
    this.iceServers = iceServersOf(token, this.options);
    const prepared = this.prepared;
    this.prepared = undefined;
    if (prepared && prepared.token !== token) prepared.peer.close();
    this.peer = !this.enabled ? undefined : prepared?.token === token ? prepared.peer : this.newPeer(this.iceServers);
    this.video.connected((message) => this.host.notify(message));
  }

  /**
   * A peer connection; `previous` is the one of the same media connection it replaces: what it
   * learned of simulcast carries over, and its first offer tells the server it is a new one.
   */
  private newPeer(iceServers: readonly IceServer[], previous?: Peer): Peer {
    this.generation += 1;
    // a peer connection made ahead of its media connection, or replaced, tells the application nothing
    const peer: Peer = new Peer(this.peerHost(() => this.peer === peer, previous !== undefined), {
      seqBase: this.generation * 2 ** 32,
      iceServers,
      iceTransportPolicy: this.options?.iceTransportPolicy ?? 'all',
      gatheringTimeoutMs: 5000,
      candidateSettleMs: CANDIDATE_SETTLE_MS,
      qualityIntervalMs: 2000,
      simulcast: previous?.simulcast,
    });
    return peer;
  }

  /** The media connection did not open: the peer connection made for it goes. */
  cancelPrepared(): void {
    this.prepared?.peer.close();
    this.prepared = undefined;
  }

  /**
   * m-lines only accumulate (each stream gets its own); near the server's limits (m-lines, offer
   * size), the next change starts a fresh peer connection carrying what is sent and received now
   * (but `starting`, the stream the caller is about to send on it).
   */
  private roomFor(starting?: number): Peer {
    const old = this.requirePeer();
    // the next offer has one m-line more; room for two, at the size of those so far
    const nextChars = old.offerChars + (2 * old.offerChars) / Math.max(old.mlines, 1);
    if (old.mlines < MLINE_BUDGET && nextChars <= MAX_SDP_CHARS) return old;
    const receiving = [...this.receiving.values()];
    const peer = this.newPeer(this.iceServers, old);
    this.peer = peer;
    old.close();
    for (const [id, records] of this.keys) {
      for (const r of [...records].reverse()) peer.key(Number(id.slice(1)), r.epoch, r.key, id.startsWith('o'));
    }
    for (const track of this.tracks.values()) if (track.streamId !== starting) void peer.send(track.streamId, track.source, track.plan);
    for (const stream of receiving) {
      this.receiving.set(stream.streamId, stream);
      void peer.receive(stream.streamId, stream.kind as MediaTrackKind);
    }
    // the server keeps bounds per session; told again all the same, as after a reconnection
    this.video.connected((message) => this.host.notify(message));
    return peer;
  }

  private remember(streamId: number, epoch: number, key: SecretKey, own: boolean): void {
    const id = `${own ? 'o' : 'r'}${streamId}`;
    this.keys.set(id, [{ epoch, key }, ...(this.keys.get(id) ?? []).filter((r) => r.epoch !== epoch)].slice(0, 2));
  }

  /** The media connection is gone (or never joined): so is its peer connection (remote tracks end). */
  detach(): void {
    this.prepared?.peer.close();
    this.prepared = undefined;
    this.peer?.close();
    this.peer = undefined;
    this.video.disconnected();
  }

  /** The session is closed for good. */
  end(): void {
    this.detach();
    for (const track of this.tracks.values()) track.end();
    this.tracks.clear();
    this.video.end();
  }

  /** A renewed token: its TURN credentials serve the next ICE gathering. */
  renewed(token: MediaToken): void {
    this.iceServers = iceServersOf(token, this.options);
    this.peer?.updateIceServers(this.iceServers);
  }

  async publishTrack(track: MediaStreamTrack, options: PublishTrackOptions, grantStreams: readonly number[]): Promise<LocalTrack> {
    const source = track as unknown as MediaStreamTrackLike;
    if (typeof source !== 'object' || source === null || (source.kind !== 'audio' && source.kind !== 'video')) {
      throw new TypeError('publishTrack needs an audio or video MediaStreamTrack');
    }
    if (source.readyState === 'ended') throw new TypeError('the track has ended');
    if (!this.peer) throw new MediaError('rtc_unavailable', 'audio and video need a browser with WebRTC and a connected session');
    const streamId = options.streamId ?? grantStreams.find((id) => !this.tracks.has(id));
    if (streamId === undefined) throw new MediaError('stream_not_allowed', 'the grant has no publish stream left for this track');
    if (!Number.isInteger(streamId) || streamId < 1 || streamId > 0xffffffff) throw new TypeError('streamId must be an integer from 1 to 4294967295');
    if (this.tracks.get(streamId)?.active) throw new MediaError('already_published', 'this stream is already published');
    const plan = planSend(source, options);
    await this.host.publish(streamId, source.kind, wireSource(source.kind, plan));
    const local = new LocalTrack(this, streamId, source, source.kind, plan);
    this.tracks.set(streamId, local);
    try {
      await this.roomFor(streamId).send(streamId, source, plan);
    } catch (err) {
      this.tracks.delete(streamId);
      local.end();
      await this.host.unpublish(streamId).catch(() => undefined);
      throw err;
    }
    return local;
  }

  /** @internal LocalTrackOwner */
  async replaceTrack(track: LocalTrack, next: MediaStreamTrackLike): Promise<void> {
    await this.requirePeer().replace(track.streamId, next);
  }

  /** @internal LocalTrackOwner */
  async unpublishTrack(track: LocalTrack): Promise<void> {
    if (this.tracks.get(track.streamId) !== track) return;
    this.tracks.delete(track.streamId);
    await this.peer?.stopSending(track.streamId).catch(() => undefined);
    await this.host.unpublish(track.streamId).catch(() => undefined);
  }

  /** After a reconnection: publish every track again on the new connection. */
  async republish(): Promise<void> {
    for (const track of [...this.tracks.values()]) {
      try {
        await this.host.publish(track.streamId, track.kind, wireSource(track.kind, track.plan));
        await this.roomFor(track.streamId).send(track.streamId, track.source, track.plan);
      } catch (err) {
        this.localEnded(track.streamId, err instanceof MediaError ? err : new MediaError('protocol_error', 'republishing failed', { cause: err }));
      }
    }
  }

  /** The server ended one of this session's streams. */
  localEnded(streamId: number, error: MediaError): void {
    const track = this.tracks.get(streamId);
    if (!track) return;
    this.tracks.delete(streamId);
    this.keys.delete(`o${streamId}`);
    track.end();
    void this.peer?.stopSending(streamId).catch(() => undefined);
    this.host.emit('localStreamEnded', { streamId, error });
  }

  /** The key of a stream this session publishes (after `published`, and at each rotation). */
  ownKey(streamId: number, epoch: number, key: SecretKey): void {
    this.remember(streamId, epoch, key, true);
    this.peer?.key(streamId, epoch, key, true);
  }

  /**
   * A stream this session may receive, with its current key: audio and video are received over
   * WebRTC. Called for several streams in a row (the streams of `joined`), they share one offer.
   */
  remoteKey(stream: RemoteStream, epoch: number, key: SecretKey): void {
    const peer = this.peer;
    if (!peer || stream.kind === 'data') return;
    this.remember(stream.streamId, epoch, key, false);
    peer.key(stream.streamId, epoch, key, false);
    if (peer.receives(stream.streamId)) return;
    this.receiving.set(stream.streamId, stream);
    try {
      this.roomFor().receive(stream.streamId, stream.kind).catch((err: unknown) => this.failed(err));
    } catch (err) {
      this.failed(err);
    }
  }

  /** A stream removed or no longer allowed. */
  remoteGone(streamId: number): void {
    this.video.forget(streamId);
    const peer = this.peer;
    if (!peer) return;
    this.keys.delete(`r${streamId}`);
    peer.forget(streamId);
    peer.stopReceiving(streamId).catch((err: unknown) => this.failed(err));
  }

  /** Bounds the application set on a received video, by stream id (`NO_BOUNDS` clears them). */
  setVideoBounds(streamId: number, bounds: ResolvedBounds): void {
    this.video.setExplicit(streamId, bounds);
  }

  /** @internal RemoteTrackOwner */
  explicitBounds(streamId: number): ResolvedBounds | undefined {
    return this.video.explicitOf(streamId);
  }

  /** @internal RemoteTrackOwner */
  streamOf(track: MediaStreamTrackLike): unknown {
    const MediaStream = browserWebRtc().MediaStream;
    if (typeof MediaStream !== 'function') throw new TypeError('this environment has no MediaStream');
    return new MediaStream([track]);
  }

  /** @internal RemoteTrackOwner: adaptive video follows the elements a video is attached to. */
  watch(track: RemoteTrack, element: MediaElementLike, on: boolean): void {
    this.video.watch(track, element, on);
  }

  /** `publish_layers`: the layers of a published video that some subscriber needs; the encoder rests the others. */
  publishLayers(streamId: number, active: readonly boolean[]): void {
    this.peer?.restLayers(streamId, active);
  }

  /** `stream_paused`, `stream_resumed` and `stream_layer`: kept for the stream's remote track, then told to the application. */
  videoReport(message: VideoReport): void {
    this.video.report(message);
  }

  /** Frame counters of the encryption worker (zero before any audio or video). */
  e2eeStats(): Promise<E2eeStats> {
    return this.peer?.stats() ?? Promise.resolve({ encrypted: 0, decrypted: 0, dropped: 0 });
  }

  /** The peer connection's statistics (`RTCPeerConnection.getStats()`), as plain objects. */
  async rtcStats(): Promise<Readonly<Record<string, unknown>>[]> {
    const report = await this.peer?.rtcStats();
    const out: Readonly<Record<string, unknown>>[] = [];
    report?.forEach((stat) => out.push(stat));
    return out;
  }

  private requirePeer(): Peer {
    if (!this.peer) throw new MediaError('connection_failed', 'the session is not connected');
    return this.peer;
  }

  private failed(err: unknown): void {
    // a negotiation that failed because the connection went away is not news: the reconnection renegotiates
    if (err instanceof MediaError && (err.code === 'closed' || err.code === 'connection_failed')) return;
    const error = err instanceof MediaError ? err : new MediaError('protocol_error', 'the WebRTC negotiation failed', { cause: err });
    this.host.emit('mediaError', { error });
  }

  /** `replacing`: the peer connection takes over from an earlier one of the same media connection. */
  private peerHost(current: () => boolean, replacing: boolean): PeerHost {
    let first = true;
    return {
      offer: async (sdp, tracks) => {
        // the server replaces its peer connection too when told this is a new one
        const fresh = replacing && first;
        first = false;
        const reply = await this.host.request({ type: 'rtc_offer', sdp, tracks, ...(fresh ? { new_connection: true } : {}) });
        if (reply.type !== 'rtc_answer') throw new MediaError('protocol_error', 'the server sent no answer');
        return reply;
      },
      onTrack: (slot) => this.emitTrack('trackSubscribed', slot),
      onTrackEnded: (slot) => this.emitTrack('trackUnsubscribed', slot),
      onSendRefused: (streamId) => this.localEnded(streamId, new MediaError('stream_not_allowed', 'the server refused to receive this track')),
      onQuality: (quality: QualityReport) => {
        if (current()) this.host.emit('connectionQuality', quality);
      },
      onState: (state) => {
        if (current()) this.host.emit('mediaConnectionState', { state });
      },
    };
  }

  private emitTrack(type: 'trackSubscribed' | 'trackUnsubscribed', slot: ReceiveSlot): void {
    const stream = this.receiving.get(slot.streamId);
    if (type === 'trackUnsubscribed' && !this.peer?.receives(slot.streamId)) this.receiving.delete(slot.streamId);
    let remote = this.remoteTracks.get(slot.streamId);
    if (type === 'trackSubscribed' || !remote || remote.track !== (slot.track as unknown)) {
      remote = new RemoteTrack(this, {
        streamId: slot.streamId,
        kind: slot.kind,
        participantId: stream?.participantId ?? '',
        userId: stream?.userId ?? '',
        track: slot.track,
        state: this.video.stateOf(slot.streamId),
      });
    }
    if (type === 'trackSubscribed') {
      this.remoteTracks.get(slot.streamId)?.end();
      this.remoteTracks.set(slot.streamId, remote);
    } else {
      if (this.remoteTracks.get(slot.streamId) === remote) this.remoteTracks.delete(slot.streamId);
      remote.end();
    }
    this.host.emit(type, remote);
  }
}

/** Quiet time after the last usable ICE candidate before the offer goes out (peer.ts, `gathered`). */
const CANDIDATE_SETTLE_MS = 10;

function iceServersOf(token: MediaToken, options: WebRtcOptions | undefined): IceServer[] {
  const servers: IceServer[] = [];
  if (token.turn && token.turn.uris.length > 0) {
    servers.push({ urls: [...token.turn.uris], username: token.turn.username, credential: token.turn.credential });
  }
  for (const server of options?.iceServers ?? []) servers.push(server);
  return servers;
}
