import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import {
  KIND_CODE, MEDIA_CLOSE, NONCE_BYTES, NONCE_LABEL, parseClientControl, parseJoin, PROTOCOL_VERSION,
  type ClientControl, type GrantFields, type MediaCloseName, type RenewRefusal, type RequestErrorCode, type Role,
  type ServerControl,
} from '@rtc/protocol';
import { b64u, fromB64u } from '../core/encoding.ts';
import { open, readHeader, seal } from './frame.ts';
import { checkGrant, deriveSessionKeys, verifyProof, type GrantCheck, type MediaGrant } from './grant-check.ts';
import type { MediaHub } from './hub.ts';
import {
  CLOSE_GRACE_MS, CONTROL_BURST, CONTROL_QUEUE_MAX_BYTES, CONTROL_RATE_PER_SECOND, HANDSHAKE_TIMEOUT_MS,
  MAX_HANDSHAKE_MESSAGE_BYTES, MAX_LIVE_GRANTS_PER_SESSION, MEDIA_QUEUE_MAX_BYTES, MEDIA_QUEUE_MAX_FRAMES,
  SOCKET_HIGH_WATER_BYTES,
} from './limits.ts';
import type { Member, Room, Stream } from './room.ts';
import { SendQueue } from './send-queue.ts';
import { socketSink } from './socket-sink.ts';

type State = 'handshake' | 'joining' | 'joined' | 'closed';

const MAX_TIMER_MS = 2 ** 31 - 1;


/** One media connection, from the challenge to the close (docs/protocol/media.md). */
export class Session implements Member {
  private state: State = 'handshake';
  private readonly hub: MediaHub;
  private readonly ws: WebSocket;
  private readonly serverNonce = randomBytes(NONCE_BYTES);
  private handshakeTimer: NodeJS.Timeout | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  private closeTimer: NodeJS.Timeout | undefined;
  private grant: MediaGrant | undefined;
  /** Every grant this session has used that has not expired: revoking any of them closes it. */
  private readonly liveGrants = new Map<string, number>();
  private c2s: Buffer = Buffer.alloc(0);
  private s2c: Buffer = Buffer.alloc(0);
  private receivedSeq = 0;
  private sentSeq = 0;
  private renewNonce: Buffer | undefined;
  private room: Room | undefined;
  private tokens = CONTROL_BURST;
  private tokensAt = 0;
  private readonly queue: SendQueue;
  participantId = '';
  readonly published = new Map<number, Stream>();
  /** Idle sweeps since the last message from the client. */
  idleSweeps = 0;

  constructor(hub: MediaHub, ws: WebSocket, socket: Duplex) {
    this.hub = hub;
    this.ws = ws;
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
    ws.on('close', () => {
      clearTimeout(this.closeTimer);
      this.teardown();
    });
    // protocol errors of the ws library (bad framing, 1009 too big) close the socket themselves
    ws.on('error', () => undefined);
    this.handshakeTimer = setTimeout(() => this.close('timeout'), HANDSHAKE_TIMEOUT_MS);
    ws.send(JSON.stringify({ type: 'challenge', version: PROTOCOL_VERSION, nonce: b64u(this.serverNonce) }));
  }

  get userId(): string {
    return this.grant?.userId ?? '';
  }

  /** Only joined sessions are room members: they hold a grant. */
  get role(): Role {
    return this.grant!.role;
  }

  get isJoined(): boolean {
    return this.state === 'joined';
  }

  canSubscribe(streamId: number): boolean {
    const grant = this.grant;
    return grant !== undefined && (grant.subRoom || grant.subs.has(streamId));
  }

  /** Seals a control message under the server-to-client key and queues it (never dropped). */
  sendControl(message: ServerControl): void {
    if (this.state !== 'joined') return;
    this.sentSeq += 1;
    const sealed = seal(this.s2c, NONCE_LABEL.serverControl, { kind: KIND_CODE.control, epoch: 0, streamId: 0, seq: this.sentSeq },
      Buffer.from(JSON.stringify(message)));
    if (!this.queue.pushControl(sealed)) setImmediate(() => this.close('slow_consumer'));
  }

  pushMedia(kind: number, message: Buffer): void {
    this.queue.pushMedia(kind, message);
  }

  /** Closes with a documented code; the session leaves its room at once. */
  close(name: MediaCloseName): void {
    if (this.state === 'closed') return;
    const { code, reason } = MEDIA_CLOSE[name];
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
    clearTimeout(this.expiryTimer);
    this.queue.clear();
    if (wasJoined && this.room) {
      this.room.remove(this);
      for (const grantId of this.liveGrants.keys()) this.hub.revocations.remove(grantId, this);
      this.hub.left(this, this.room);
    }
    this.hub.forget(this);
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
    const join = parseJoin(data.toString('utf8'));
    if (!join) return this.close('protocol_error');
    this.state = 'joining';
    const now = this.hub.nowMs();
    const check = checkGrant(join.grant, this.hub.keys, Math.floor(now / 1000));
    if (!check.ok) return this.close(check.failure);
    const clientNonce = fromB64u(join.nonce)!;
    if (!verifyProof(check.mediaKey, check.grant.digest, this.serverNonce, clientNonce, fromB64u(join.proof)!)) {
      check.mediaKey.fill(0);
      return this.close('unauthorized');
    }
    this.hub.isRevoked(check.grant.grantId).then(
      (revoked) => {
        if (this.state !== 'joining') return;
        // a revocation event may have arrived while the store answered
        if (revoked || this.hub.revocations.isRevoked(check.grant.grantId)) return this.close('revoked');
        this.admit(check, clientNonce);
      },
      (err: unknown) => {
        this.hub.logger.error({ err }, 'media: revocation look-up failed');
        this.close('internal_error');
      },
    );
  }

  private admit(check: GrantCheck & { ok: true }, clientNonce: Buffer): void {
    const grant = check.grant;
    const earlier = this.hub.roomFor(grant.projectId, grant.roomId).members.get(grant.userId);
    if (earlier instanceof Session) earlier.close('replaced');
    // looked up again: the replaced session may have been the last member of the room
    const room = this.hub.roomFor(grant.projectId, grant.roomId);
    if (room.isFull()) {
      this.hub.dropIfEmpty(room);
      return this.close('room_full');
    }
    clearTimeout(this.handshakeTimer);
    const keys = deriveSessionKeys(check.mediaKey, grant.digest, this.serverNonce, clientNonce);
    check.mediaKey.fill(0);
    this.c2s = keys.c2s;
    this.s2c = keys.s2c;
    this.grant = grant;
    this.participantId = `pa_${randomBytes(12).toString('base64url')}`;
    this.state = 'joined';
    this.tokensAt = this.hub.nowMs();
    this.trackGrant(grant);
    this.room = room;
    room.add(this);
    this.renewNonce = randomBytes(NONCE_BYTES);
    this.sendControl({
      type: 'joined',
      participant_id: this.participantId,
      ...this.grantFields(grant),
      room_id: grant.roomId,
      project_id: grant.projectId,
      user_id: grant.userId,
      server_time_ms: this.hub.nowMs(),
      renew_nonce: b64u(this.renewNonce),
      ...room.snapshot(this),
      limits: this.hub.limits,
    });
    this.hub.joined(this, grant);
  }

  private grantFields(grant: MediaGrant): GrantFields {
    return {
      role: grant.role,
      expires_at: grant.expiresAt,
      publish_streams: [...grant.pub],
      subscribe_streams: [...grant.subs],
      subscribe_room: grant.subRoom,
    };
  }

  private trackGrant(grant: MediaGrant): void {
    this.liveGrants.set(grant.grantId, grant.expiresAt);
    this.hub.revocations.add(grant.grantId, this);
    clearTimeout(this.expiryTimer);
    // grants live an hour at most; the bound only keeps setTimeout's 32-bit range
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, grant.expiresAt * 1000 - this.hub.nowMs()));
    this.expiryTimer = setTimeout(() => this.close('expired'), delay);
  }

  private onBinary(message: Buffer): void {
    const header = readHeader(message);
    if (!header) return this.close('protocol_error');
    if (header.kind === KIND_CODE.control) return this.onControlFrame(message, header.epoch, header.streamId, header.seq);
    const stream = this.published.get(header.streamId);
    if (!stream) {
      // a stream of the grant that this session does not publish (now): a frame that crossed an
      // unpublish on the wire, dropped; a stream id outside the grant is a violation
      if (this.grant?.pub.has(header.streamId)) {
        this.hub.stats.framesDropped += 1;
        return;
      }
      return this.close('protocol_error');
    }
    if (header.kind !== stream.kindCode) return this.close('protocol_error');
    const generation = stream.generation(header.epoch, header.epoch === stream.current.epoch ? 0 : this.hub.nowMs());
    if (!generation || !generation.window.check(header.seq)) {
      this.hub.stats.framesDropped += 1;
      return;
    }
    if (!open(generation.key, NONCE_LABEL.streamFrame, message)) return this.close('protocol_error');
    generation.window.commit(header.seq);
    for (const subscriber of stream.subscribers) subscriber.pushMedia(header.kind, message);
  }

  private onControlFrame(message: Buffer, epoch: number, streamId: number, seq: number): void {
    if (epoch !== 0 || streamId !== 0 || seq !== this.receivedSeq + 1) return this.close('protocol_error');
    const plaintext = open(this.c2s, NONCE_LABEL.clientControl, message);
    if (!plaintext) return this.close('protocol_error');
    this.receivedSeq = seq;
    if (!this.takeToken()) return this.close('rate_limited');
    const control = parseClientControl(plaintext.toString('utf8'));
    if (!control) return this.close('protocol_error');
    this.onControl(control);
  }

  private takeToken(): boolean {
    const now = this.hub.nowMs();
    this.tokens = Math.min(CONTROL_BURST, this.tokens + ((now - this.tokensAt) / 1000) * CONTROL_RATE_PER_SECOND);
    this.tokensAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private onControl(control: ClientControl): void {
    const grant = this.grant!;
    const room = this.room!;
    switch (control.type) {
      case 'publish': {
        if (grant.role === 'audience' || !grant.pub.has(control.stream_id)) {
          return this.sendError(control.id, 'stream_not_allowed', 'the grant does not list this stream id for publishing');
        }
        const result = room.publish(this, control.stream_id, control.kind);
        if (!result.ok) {
          return this.sendError(control.id, result.code, result.code === 'stream_in_use'
            ? 'another participant publishes this stream id' : 'this stream is already published');
        }
        const { stream } = result;
        this.sendControl({
          type: 'published', id: control.id, stream_id: stream.id, kind: stream.kind,
          epoch: stream.current.epoch, key: stream.current.key.toString('base64url'),
        });
        return;
      }
      case 'unpublish': {
        const stream = this.published.get(control.stream_id);
        if (!stream) return this.sendError(control.id, 'not_published', 'this session does not publish that stream');
        room.removeStream(stream, false);
        this.sendControl({ type: 'unpublished', id: control.id, stream_id: control.stream_id });
        return;
      }
      case 'renew':
        return this.renew(control);
      case 'ping':
        this.sendControl({ type: 'pong', id: control.id, server_time_ms: this.hub.nowMs() });
        return;
      case 'leave':
        return this.close('normal');
    }
  }

  private sendError(id: number, code: RequestErrorCode, message: string, extra: { reason?: RenewRefusal; renew_nonce?: string } = {}): void {
    this.sendControl({ type: 'error', id, code, message, ...extra });
  }

  private renew(control: ClientControl & { type: 'renew' }): void {
    const challenge = this.renewNonce;
    // every renewal attempt consumes the challenge: a proof can be used once
    this.renewNonce = undefined;
    const refuse = (reason: RenewRefusal): void => {
      if (this.state !== 'joined') return;
      this.renewNonce = randomBytes(NONCE_BYTES);
      this.sendError(control.id, 'renew_refused', `the renewal was refused: ${reason}`, { reason, renew_nonce: b64u(this.renewNonce) });
    };
    if (!challenge) return refuse('stale_challenge');
    const nowMs = this.hub.nowMs();
    const check = checkGrant(control.grant, this.hub.keys, Math.floor(nowMs / 1000));
    if (!check.ok) return refuse(check.failure === 'expired' ? 'expired' : 'invalid_grant');
    const current = this.grant!;
    const next = check.grant;
    const proven = verifyProof(check.mediaKey, next.digest, challenge, fromB64u(control.nonce)!, fromB64u(control.proof)!);
    check.mediaKey.fill(0);
    if (!proven) return refuse('bad_proof');
    if (next.projectId !== current.projectId || next.roomId !== current.roomId || next.userId !== current.userId) {
      return refuse('identity_mismatch');
    }
    for (const [grantId, exp] of this.liveGrants) {
      if (exp * 1000 <= nowMs) {
        this.liveGrants.delete(grantId);
        this.hub.revocations.remove(grantId, this);
      }
    }
    if (!this.liveGrants.has(next.grantId) && this.liveGrants.size >= MAX_LIVE_GRANTS_PER_SESSION) return refuse('too_many_grants');
    this.hub.isRevoked(next.grantId).then(
      (revoked) => {
        if (this.state !== 'joined') return;
        if (revoked || this.hub.revocations.isRevoked(next.grantId)) return refuse('revoked');
        this.grant = next;
        this.trackGrant(next);
        this.room!.reconcile(this, (id) => next.role !== 'audience' && next.pub.has(id));
        this.renewNonce = randomBytes(NONCE_BYTES);
        this.sendControl({ type: 'renewed', id: control.id, ...this.grantFields(next), renew_nonce: b64u(this.renewNonce) });
      },
      (err: unknown) => {
        this.hub.logger.error({ err }, 'media: revocation look-up failed');
        refuse('invalid_grant');
      },
    );
  }
}
