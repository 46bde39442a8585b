import {
  KIND_CODE, NONCE_LABEL, parseClientControl,
  type ClientControl, type FrameHeader, type MediaCloseName, type RenewRefusal, type RequestErrorCode, type ServerControl,
} from '@rtc/protocol';
import { open, seal } from '../frames/frame.ts';
import type { SessionKeys } from './handshake.ts';
import { CONTROL_BURST, CONTROL_RATE_PER_SECOND } from '../node/limits.ts';
import type { MediaGrant } from './grant-check.ts';
import type { Member, Room } from '../room/room.ts';

/**
 * The sealed control channel of a joined session (docs/protocol/media.md, "Control messages"):
 * opens client messages in sequence under `k_c2s`, within the rate limit, and seals the server's
 * under `k_s2c`.
 */
export class ControlChannel {
  private readonly keys: SessionKeys;
  private receivedSeq = 0;
  private sentSeq = 0;
  private tokens = CONTROL_BURST;
  private tokensAt: number;

  constructor(keys: SessionKeys, nowMs: number) {
    this.keys = keys;
    this.tokensAt = nowMs;
  }

  /** The client's control message in a control frame, or the close code its frame earns. */
  open(message: Buffer, header: FrameHeader, nowMs: number): ClientControl | MediaCloseName {
    if (header.epoch !== 0 || header.streamId !== 0 || header.seq !== this.receivedSeq + 1) return 'protocol_error';
    const plaintext = open(this.keys.c2s, NONCE_LABEL.clientControl, message);
    if (!plaintext) return 'protocol_error';
    this.receivedSeq = header.seq;
    if (!this.takeToken(nowMs)) return 'rate_limited';
    return parseClientControl(plaintext.toString('utf8')) ?? 'protocol_error';
  }

  /** A server control message sealed with the next sequence number. */
  seal(message: ServerControl): Buffer {
    this.sentSeq += 1;
    return seal(this.keys.s2c, NONCE_LABEL.serverControl, { kind: KIND_CODE.control, epoch: 0, streamId: 0, seq: this.sentSeq },
      Buffer.from(JSON.stringify(message)));
  }

  private takeToken(now: number): boolean {
    this.tokens = Math.min(CONTROL_BURST, this.tokens + ((now - this.tokensAt) / 1000) * CONTROL_RATE_PER_SECOND);
    this.tokensAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** What a control message acts on: the joined session, its grant and room, and its ways to answer. */
export interface ControlContext {
  readonly member: Member;
  readonly grant: MediaGrant;
  readonly room: Room;
  send(message: ServerControl): void;
  renew(control: ClientControl & { readonly type: 'renew' }): void;
  rtcOffer(control: ClientControl & { readonly type: 'rtc_offer' }): void;
  rtcVideo(control: ClientControl & { readonly type: 'rtc_video' }): void;
  close(name: MediaCloseName): void;
  nowMs(): number;
}

/** Error reply to a request. */
export function errorReply(
  id: number, code: RequestErrorCode, message: string, extra: { reason?: RenewRefusal; renew_nonce?: string } = {},
): ServerControl {
  return { type: 'error', id, code, message, ...extra };
}

/** Carries out one client control message (docs/protocol/media.md, "Client to server"). */
export function handleControl(ctx: ControlContext, control: ClientControl): void {
  const { grant, room, member } = ctx;
  switch (control.type) {
    case 'publish': {
      if (grant.role === 'audience' || !grant.pub.has(control.stream_id)) {
        return ctx.send(errorReply(control.id, 'stream_not_allowed', 'the grant does not list this stream id for publishing'));
      }
      const result = room.publish(member, control.stream_id, control.kind, control.source);
      if (!result.ok) {
        return ctx.send(errorReply(control.id, result.code, result.code === 'stream_in_use'
          ? 'another participant publishes this stream id' : 'this stream is already published'));
      }
      const { stream } = result;
      ctx.send({
        type: 'published', id: control.id, stream_id: stream.id, kind: stream.kind,
        epoch: stream.current.epoch, key: stream.current.key.toString('base64url'),
      });
      return;
    }
    case 'unpublish': {
      const stream = member.published.get(control.stream_id);
      if (!stream) return ctx.send(errorReply(control.id, 'not_published', 'this session does not publish that stream'));
      room.removeStream(stream, false);
      ctx.send({ type: 'unpublished', id: control.id, stream_id: control.stream_id });
      return;
    }
    case 'renew':
      return ctx.renew(control);
    case 'rtc_offer':
      return ctx.rtcOffer(control);
    case 'rtc_video':
      return ctx.rtcVideo(control);
    case 'ping':
      ctx.send({ type: 'pong', id: control.id, server_time_ms: ctx.nowMs() });
      return;
    case 'leave':
      return ctx.close('normal');
  }
}
