import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import {
  KIND_CODE, MEDIA_CLOSE, NONCE_BYTES, PROTOCOL_VERSION,
  type ClientControl, type MediaKind, type MediaCloseName, type ParticipantLeftReason, type Role,
  type ServerControl,
} from '@rtc/protocol';
import { b64u } from '../../core/encoding.ts';
import { ControlChannel, errorReply, handleControl } from './control.ts';
import { forwardFrame } from '../room/forwarding.ts';
import { readHeader } from '../frames/frame.ts';
import type { MediaGrant } from './grant-check.ts';
import { checkJoin, type JoinCheck, type SessionKeys } from './handshake.ts';
import {
  CLOSE_GRACE_MS, CONTROL_QUEUE_MAX_BYTES, HANDSHAKE_TIMEOUT_MS, MAX_HANDSHAKE_MESSAGE_BYTES, MEDIA_QUEUE_MAX_BYTES,
  MEDIA_QUEUE_MAX_FRAMES, SOCKET_HIGH_WATER_BYTES,
} from '../node/limits.ts';
import { checkWithKeyReload } from '../../grant-guard/key-reload.ts';
import { Renewal, type RenewingSession } from './renewal.ts';
import { grantFields, SessionGrants, type Permissions } from './session-grants.ts';
import type { DownlinkSnapshot, VideoBounds } from '../webrtc/downlink.ts';
import type { DownTrack } from '../webrtc/down-track.ts';
import type * as PeerModule from '../webrtc/peer.ts';
import type { PeerOwner, RtcPeer } from '../webrtc/peer.ts';
import type { KeyFrameSource, Member, Room, RoomSettings, Stream } from '../room/room.ts';
import { SendQueue } from '../frames/send-queue.ts';
import { leftReasonOf, type SessionHost } from './session-host.ts';
import { VideoPreferences } from './video-preferences.ts';
import { QualityMeter } from './quality.ts';
import type { LiveQuality, RoomCutoffRecord } from '../../rooms/store.ts';
import { FLOW, SessionUsage, flowKey } from '../../sessions/usage-kind.ts';
import { MediaAccount } from './media-account.ts';
import { socketSink } from '../frames/socket-sink.ts';

export type { SessionHost };

/**
 * The WebRTC side of a session (webrtc/peer.ts and werift under it, some 18 MB of a process): loaded
 * when the first session of a process that offers WebRTC connects, and waited for before it joins,
 * rather than at start, so that a process no WebRTC client reaches never holds it
 * (docs/decisions/webrtc.md).
 */
let peerModule: typeof PeerModule | undefined;
let peerModuleLoading: Promise<void> | undefined;

function loadPeerModule(): Promise<void> {
  return (peerModuleLoading ??= import('../webrtc/peer.ts').then((loaded) => {
    peerModule = loaded;
  }));
}

type State = 'handshake' | 'joining' | 'joined' | 'closed';

/**
 * One media connection, from the challenge to the close (docs/protocol/media.md): its state, socket,
 * queue and timers. The handshake checks are in handshake.ts, its grants in session-grants.ts,
 * renewals in renewal.ts, control messages in control.ts, media frames in forwarding.ts.
 */
export class Session implements Member, PeerOwner, RenewingSession {
  private state: State = 'handshake';
  private readonly host: SessionHost;
  private readonly ws: WebSocket;
  private readonly serverNonce = randomBytes(NONCE_BYTES);
  private handshakeTimer: NodeJS.Timeout | undefined;
  private closeTimer: NodeJS.Timeout | undefined;
  readonly grants: SessionGrants<Session>;
  private readonly renewal: Renewal;
  private control: ControlChannel | undefined;
  private room: Room | undefined;
  private readonly queue: SendQueue;
  /** The session's WebRTC peer connection, from its first `rtc_offer` to the session's end. */
  private peer: RtcPeer | undefined;
  /**
   * Why the session ended, as `participant.left` says (docs/reference/webhooks.md, "Why a participant
   * left"): set by the server's close, or by the client's own close frame; `disconnected` otherwise.
   */
  leftReason: ParticipantLeftReason = 'disconnected';
  participantId = '';
  /** Set by the customer's server through the room service API; '' and {} at join. */
  metadata = '';
  attributes: Readonly<Record<string, string>> = {};
  /** When the session joined its room (seconds). */
  joinedAtSec = 0;
  /** The video it sent and received and whether it went through TURN: its usage kind at the leave (docs/console.md, "Usage"). */
  readonly usage = new SessionUsage();
  /** The media bytes it receives and sends, for its quality in the room service API (docs/reference/room-api.md, "Quality"). */
  private readonly meter: QualityMeter;
  /** Where the published streams and the down tracks count its RTP. */
  readonly account: MediaAccount;
  readonly published = new Map<number, Stream>();
  /** Bounds the client set with `rtc_video` on the video it receives, by stream id (docs/protocol/media.md, "Layers"). */
  private readonly videoPreferences = new VideoPreferences();
  /** Idle sweeps since the last message from the client. */
  idleSweeps = 0;

  constructor(host: SessionHost, ws: WebSocket, socket: Duplex) {
    this.host = host;
    this.ws = ws;
    this.meter = new QualityMeter(host.nowMs());
    this.account = new MediaAccount(this.meter, this.usage);
    this.grants = new SessionGrants<Session>(this, host.grantHolders, () => host.nowMs(), () => this.close('expired'));
    this.renewal = new Renewal(this, host);
    this.queue = new SendQueue(
      socketSink(ws, socket),
      {
        highWaterBytes: SOCKET_HIGH_WATER_BYTES,
        mediaMaxBytes: MEDIA_QUEUE_MAX_BYTES,
        mediaMaxFrames: MEDIA_QUEUE_MAX_FRAMES,
        controlMaxBytes: CONTROL_QUEUE_MAX_BYTES,
      },
    );
    socket.on('drain', () => this.queue.flush());
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    ws.on('close', (code: number) => {
      clearTimeout(this.closeTimer);
      // the client closed first: a normal close (1000, or 1001 from a page going away) is leaving
      if (this.state !== 'closed' && (code === 1000 || code === 1001)) this.leftReason = 'left';
      this.teardown();
    });
    // protocol errors of the ws library (bad framing, 1009 too big) close the socket themselves
    ws.on('error', () => undefined);
    this.handshakeTimer = setTimeout(() => this.close('timeout'), HANDSHAKE_TIMEOUT_MS);
    // loaded while the client answers the challenge; a failure shows when the join waits for it
    if (host.rtc) loadPeerModule().catch(() => undefined);
    ws.send(JSON.stringify({ type: 'challenge', version: PROTOCOL_VERSION, nonce: b64u(this.serverNonce) }));
  }

  get userId(): string {
    return this.grants.current?.userId ?? '';
  }

  /** Only joined sessions are room members: they hold a grant. */
  get role(): Role {
    return this.grants.current!.role;
  }

  get isJoined(): boolean {
    return this.state === 'joined';
  }

  canSubscribe(streamId: number): boolean {
    const grant = this.grants.current;
    return grant !== undefined && (grant.subRoom || grant.subs.has(streamId));
  }

  /** The grant as it applies now (with the permissions set through the room service API). */
  get currentGrant(): MediaGrant | undefined {
    return this.grants.current;
  }

  get roomId(): string {
    return this.grants.current?.roomId ?? '';
  }

  get projectId(): string {
    return this.grants.current?.projectId ?? '';
  }

  /**
   * Applies permissions set by the customer's server (docs/reference/room-api.md): streams no longer
   * allowed end at once, both ways, and the client is told with `permissions`.
   */
  applyPermissions(permissions: Permissions): void {
    if (this.state !== 'joined') return;
    const next = this.grants.restrict(permissions);
    if (!next) return;
    this.host.permissionsApplied(this);
    this.reconcile(next);
    this.sendControl({
      type: 'permissions', publish_streams: [...next.pub], subscribe_streams: [...next.subs], subscribe_room: next.subRoom,
    });
  }

  /**
   * Mutes or unmutes a stream this session publishes, for the customer's server (docs/reference/room-api.md,
   * "Muting a stream"); nothing when it does not publish it (any more).
   */
  setStreamMuted(streamId: number, muted: boolean): void {
    const stream = this.published.get(streamId);
    if (this.state === 'joined' && stream) this.room!.setMuted(stream, muted);
  }

  /** Ends the streams `grant` no longer allows, both ways. */
  reconcile(grant: MediaGrant): void {
    this.room!.reconcile(this, (id) => grant.role !== 'audience' && grant.pub.has(id));
  }

  /** A renewal's grant is in force and the client told: the server records it. */
  renewed(): void {
    this.host.renewed(this);
  }

  /** Whether a cut-off of `projectId` at `cutAt` covers a grant this joined session has used. */
  isCutOffBy(projectId: string, cutAt: number): boolean {
    return this.state === 'joined' && this.grants.current?.projectId === projectId && this.grants.coveredBy(cutAt);
  }

  /** Whether a removal's or a room's end's cut-off covers a grant this joined session has used (all of one user and room). */
  isRoomCutOffBy(cutoff: Pick<RoomCutoffRecord, 'projectId' | 'roomId' | 'userId' | 'cutAt'>): boolean {
    const grant = this.grants.current;
    return this.state === 'joined' && grant !== undefined && grant.projectId === cutoff.projectId && grant.roomId === cutoff.roomId
      && (cutoff.userId === null || grant.userId === cutoff.userId) && this.grants.coveredBy(cutoff.cutAt);
  }

  /** Seals a control message under the server-to-client key and queues it (never dropped). */
  sendControl(message: ServerControl): void {
    if (this.state !== 'joined' || !this.control) return;
    if (!this.queue.pushControl(this.control.seal(message))) setImmediate(() => this.close('slow_consumer'));
  }

  pushMedia(kind: number, message: Buffer): void {
    this.meter.sent(message.length);
    this.host.stats.websocketOut.add(kind, message.length);
    // a WebSocket frame's picture size is in its sealed payload: billed by its rate (docs/console.md, "Usage kind of a session")
    this.usage.noteMedia(flowKey(FLOW.websocketOut, message.readUInt32BE(4)), kind === KIND_CODE.video, message.length, this.host.nowMs());
    this.queue.pushMedia(kind, message);
  }

  /** Its client's end of the streams it publishes over WebRTC, while joined (rooms ask it for key frames). */
  get keyFrames(): KeyFrameSource | undefined {
    return this.state === 'joined' ? this.peer : undefined;
  }

  downTrack(streamId: number): DownTrack | undefined {
    return this.state === 'joined' ? this.peer?.downTrack(streamId) : undefined;
  }

  /** Its peer connection negotiated a down track for a stream: the stream feeds it if the session receives it. */
  attachTrack(streamId: number, track: DownTrack): void {
    if (this.state === 'joined') this.room?.streams.get(streamId)?.attach(this, track);
  }

  publishedKind(streamId: number): MediaKind | undefined {
    return this.state === 'joined' ? this.published.get(streamId)?.kind : undefined;
  }

  /** Its quality since the last call (docs/reference/room-api.md, "Quality"); undefined when no time passed. */
  sampleQuality(): LiveQuality | undefined {
    return this.meter.sample(this.host.nowMs(), this.peer?.quality(), (streamId, layer) => {
      const rids = this.room?.streams.get(streamId)?.rids ?? [];
      return rids.length > 0 ? rids[layer] : undefined;
    });
  }

  videoBounds(streamId: number): VideoBounds | undefined {
    const p = this.videoPreferences.get(streamId);
    return p ? { maxWidth: p.max_width, maxHeight: p.max_height, maxLayer: p.max_layer } : undefined;
  }

  onRelayed(): void {
    this.usage.relayed = true;
  }

  onDownlinkReport(snapshot: DownlinkSnapshot): void {
    this.host.logger.debug({ participantId: this.participantId, ...snapshot }, 'media: downlink bandwidth');
  }

  /**
   * Closes with a documented code; the session leaves its room at once. `why` is the reason
   * `participant.left` gives when it differs from the close name (a removal closes with `revoked`).
   */
  close(name: MediaCloseName, why: ParticipantLeftReason = leftReasonOf(name)): void {
    if (this.state === 'closed') return;
    const { code, reason } = MEDIA_CLOSE[name];
    this.leftReason = why;
    this.teardown();
    if (this.ws.readyState === this.ws.OPEN) {
      this.ws.close(code, reason);
      this.closeTimer = setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS);
      this.closeTimer.unref();
    }
  }

  /** Closes sessions that were silent for `maxSweeps` sweeps. */
  sweep(maxSweeps: number): void {
    this.idleSweeps += 1;
    if (this.idleSweeps > maxSweeps) this.close('timeout');
  }

  private teardown(): void {
    if (this.state === 'closed') return;
    const wasJoined = this.state === 'joined';
    this.state = 'closed';
    clearTimeout(this.handshakeTimer);
    this.grants.release();
    this.queue.clear();
    // docs/protocol/media.md, "Binding to the session": the peer connection ends with the session
    this.peer?.close();
    if (wasJoined && this.room) {
      this.room.remove(this);
      this.host.left(this, this.room);
    }
    this.host.forget(this);
  }

  private onMessage(data: unknown, isBinary: boolean): void {
    if (this.state === 'closed' || !Buffer.isBuffer(data)) return;
    this.idleSweeps = 0;
    if (this.state === 'joined') {
      if (!isBinary) return this.close('protocol_error');
      this.onBinary(data);
      return;
    }
    if (this.state !== 'handshake' || isBinary) return this.close('protocol_error');
    if (data.length > MAX_HANDSHAKE_MESSAGE_BYTES) return this.close('message_too_big');
    const text = data.toString('utf8');
    // no other message is taken while the join is checked
    this.state = 'joining';
    void this.checkJoining(text).then(
      (check) => {
        if (this.state === 'joining') this.join(check);
      },
      (err: unknown) => {
        this.host.logger.error({ err }, 'media: checking a join failed');
        this.close('internal_error');
      },
    );
  }

  private checkJoining(text: string): Promise<JoinCheck> {
    return checkWithKeyReload(
      () => checkJoin(text, this.host.keys, this.serverNonce, this.host.nowMs()), this.host.keys.reload, () => this.state === 'joining',
    );
  }

  private join(check: JoinCheck): void {
    if (!check.ok) return this.close(check.close);
    this.state = 'joining';
    const { grant, keys } = check;
    Promise.all([
      this.host.isRefused(grant), this.host.roomSettings(grant.projectId, grant.roomId), this.host.grantPermissions(grant),
      this.host.rtc ? loadPeerModule() : undefined,
    ]).then(
      ([refused, settings, permissions]) => {
        if (this.state !== 'joining') return;
        // a revocation or archive event may have arrived while the store answered
        if (refused || this.host.isRefusedInMemory(grant)) return this.close('revoked');
        this.admit(grant, keys, settings, permissions);
      },
      (err: unknown) => {
        this.host.logger.error({ err }, 'media: join look-ups failed (revocation, room settings, permissions or the WebRTC module)');
        this.close('internal_error');
      },
    );
  }

  private admit(grant: MediaGrant, keys: SessionKeys, settings: RoomSettings | undefined, permissions: Permissions | undefined): void {
    const earlier = this.host.roomFor(grant.projectId, grant.roomId, settings).members.get(grant.userId);
    if (earlier instanceof Session) earlier.close('replaced');
    // looked up again: the replaced session may have been the last member of the room
    const room = this.host.roomFor(grant.projectId, grant.roomId, settings);
    if (room.isFull()) {
      this.host.dropIfEmpty(room);
      return this.close('room_full');
    }
    clearTimeout(this.handshakeTimer);
    this.control = new ControlChannel(keys, this.host.nowMs());
    this.participantId = `pa_${randomBytes(12).toString('base64url')}`;
    this.joinedAtSec = Math.floor(this.host.nowMs() / 1000);
    this.state = 'joined';
    const applied = this.grants.admit(grant, permissions);
    this.room = room;
    room.add(this);
    const renewNonce = this.renewal.nextChallenge();
    this.sendControl({
      type: 'joined',
      participant_id: this.participantId,
      ...grantFields(applied),
      room_id: grant.roomId,
      project_id: grant.projectId,
      user_id: grant.userId,
      server_time_ms: this.host.nowMs(),
      renew_nonce: renewNonce,
      ...room.snapshot(this),
      limits: this.host.limits,
      room_metadata: room.settings.metadata,
    });
    for (const notice of room.mutedNotices()) this.sendControl(notice);
    this.host.joined(this, applied);
  }

  private onBinary(message: Buffer): void {
    const header = readHeader(message);
    if (!header) return this.close('protocol_error');
    if (header.kind === KIND_CODE.control) {
      const control = this.control!.open(message, header, this.host.nowMs());
      if (typeof control === 'string') return this.close(control);
      return handleControl({
        member: this,
        grant: this.grants.current!,
        room: this.room!,
        send: (m) => this.sendControl(m),
        renew: (c) => this.renewal.handle(c),
        rtcOffer: (c) => this.rtcOffer(c),
        rtcVideo: (c) => {
          this.videoPreferences.set(c, (id) => this.room?.streams.has(id) === true);
          this.peer?.preferenceChanged(c.stream_id);
        },
        close: (name) => this.close(name),
        nowMs: () => this.host.nowMs(),
      }, control);
    }
    const result = forwardFrame(message, header, this.published, this.grants.mayHavePublished, () => this.host.nowMs());
    if (result === 'forwarded') {
      this.meter.received(message.length);
      this.host.stats.framesForwarded += 1;
      this.host.stats.websocketIn.add(header.kind, message.length);
      this.usage.noteMedia(flowKey(FLOW.websocketIn, header.streamId), header.kind === KIND_CODE.video, message.length, this.host.nowMs());
    } else if (result === 'dropped') this.host.stats.framesDropped += 1;
    else if (result === 'violation') this.close('protocol_error');
  }

  private rtcOffer(control: ClientControl & { readonly type: 'rtc_offer' }): void {
    const options = this.host.rtc;
    if (!options) return this.sendControl(errorReply(control.id, 'rtc_unavailable', 'this media node runs without WebRTC'));
    // loaded before the session joined (loadPeerModule)
    if (!peerModule) {
      void loadPeerModule().then(() => this.state === 'joined' && this.rtcOffer(control), () => this.close('internal_error'));
      return;
    }
    this.peer ??= new peerModule.RtcPeer(this, options, () => this.host.nowMs(), this.host.stats);
    this.peer.reply(control, this.host.logger);
  }
}
