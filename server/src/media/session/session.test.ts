/**
 * A session is a participant's life on the node (docs/protocol/media.md): challenge, join, close.
 * Here on a fake socket and a fake host, before any join: what it sends first, how it closes, what it
 * leaves behind, and that it offers the room nothing of media until it joined.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { WebSocket } from 'ws';
import { MEDIA_CLOSE, PROTOCOL_VERSION } from '@rtc/protocol';
import { GrantHolders } from '../../grant-guard/grant-holders.ts';
import { MediaStats } from '../../metrics/media-stats.ts';
import { MAX_HANDSHAKE_MESSAGE_BYTES } from '../node/limits.ts';
import { Session, type SessionHost } from './session.ts';

class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  readonly sent: unknown[] = [];
  closed: { code: number; reason: string } | undefined;
  send(data: unknown): void {
    this.sent.push(data);
  }
  close(code: number, reason: string): void {
    this.closed = { code, reason };
    this.readyState = 3;
  }
  terminate(): void {
    this.readyState = 3;
  }
}

function host(): SessionHost & { forgotten: Session[]; leaves: Session[] } {
  const forgotten: Session[] = [];
  const leaves: Session[] = [];
  return {
    forgotten,
    leaves,
    keys: { verifying: new Map(), masters: new Map(), issuer: 'test' },
    logger: pino({ level: 'silent' }),
    limits: { max_message_bytes: 1, replay_window: 1, handshake_timeout_ms: 1, idle_timeout_ms: 1 },
    stats: new MediaStats(),
    rtc: undefined,
    grantHolders: new GrantHolders<Session>(),
    nowMs: () => 5_000,
    isRefused: async () => false,
    isRefusedInMemory: () => false,
    grantPermissions: async () => undefined,
    roomFor: () => assert.fail('no room before a join'),
    roomSettings: async () => undefined,
    dropIfEmpty: () => undefined,
    joined: () => undefined,
    renewed: () => undefined,
    permissionsApplied: () => undefined,
    left: (session: Session) => leaves.push(session),
    forget: (session: Session) => forgotten.push(session),
  };
}

function open(): { session: Session; ws: FakeSocket; h: ReturnType<typeof host> } {
  const ws = new FakeSocket();
  const socket = Object.assign(new EventEmitter(), { cork: () => undefined, uncork: () => undefined });
  const h = host();
  const session = new Session(h, ws as unknown as WebSocket, socket as unknown as Duplex);
  return { session, ws, h };
}

describe('a media session before its join', () => {
  it('sends its challenge at once', () => {
    const { session, ws } = open();
    const challenge = JSON.parse(String(ws.sent[0])) as { type: string; version: number; nonce: string };
    assert.equal(challenge.type, 'challenge');
    assert.equal(challenge.version, PROTOCOL_VERSION);
    assert.equal(Buffer.from(challenge.nonce, 'base64url').length > 0, true);
    session.close('normal');
  });

  it('closes with protocol_error on a binary message, and is forgotten by its host without having left a room', () => {
    const { session, ws, h } = open();
    ws.emit('message', Buffer.from([1, 2, 3]), true);
    assert.deepEqual(ws.closed, { code: MEDIA_CLOSE.protocol_error.code, reason: MEDIA_CLOSE.protocol_error.reason });
    assert.equal(session.leftReason, 'protocol_error');
    assert.deepEqual(h.forgotten, [session]);
    assert.deepEqual(h.leaves, []);
  });

  it('closes with message_too_big on a join message over the handshake bound', () => {
    const { ws } = open();
    ws.emit('message', Buffer.alloc(MAX_HANDSHAKE_MESSAGE_BYTES + 1, 0x20), false);
    assert.equal(ws.closed?.code, MEDIA_CLOSE.message_too_big.code);
  });

  it('takes a client\'s normal close as a leave', () => {
    const { session, ws, h } = open();
    ws.emit('close', 1000);
    assert.equal(session.leftReason, 'left');
    assert.deepEqual(h.forgotten, [session]);
  });

  it('offers a room no key frames, down track or subscription until it joined', () => {
    const { session } = open();
    assert.equal(session.isJoined, false);
    assert.equal(session.keyFrames, undefined);
    assert.equal(session.downTrack(1), undefined);
    assert.equal(session.canSubscribe(1), false);
    assert.equal(session.publishedKind(1), undefined);
    session.close('normal');
    assert.equal(session.isJoined, false);
  });
});
