import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { KINDS, WireClient, openMediaSocket, sealWire, wireProof, type WireCloseInfo } from '../../../../test/helpers/media-wire.ts';
import type { GrantClaims, TokenResponse } from '@rtc/protocol';
import { MediaError, type MediaSession } from '../../../../sdk/app/src/index.ts';
import { GRANT_TYPE, signJws } from '../../core/grant.ts';
import { request } from '../../../../test/helpers/http.ts';
import type { ServedPlatform } from '../../../../test/helpers/serve-inproc.ts';
import { TcpProxy, TokenIssuer, collectFrames, join, text, until, waitPastExpiry, websocketPayloads } from '../../../../test/helpers/media-session.ts';
import { serveMedia } from '../../../../test/helpers/media-platform.ts';

function grantParts(grant: string): { header: Record<string, unknown>; claims: GrantClaims; signature: string } {
  const [h, p, s] = grant.split('.') as [string, string, string];
  return {
    header: JSON.parse(Buffer.from(h, 'base64url').toString()) as Record<string, unknown>,
    claims: JSON.parse(Buffer.from(p, 'base64url').toString()) as GrantClaims,
    signature: s,
  };
}

function withGrant(token: TokenResponse, grant: string): TokenResponse {
  return { ...token, media: { ...token.media, grant } };
}

async function refusal(promise: Promise<MediaSession>): Promise<MediaError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof MediaError, `expected a MediaError, got ${String(err)}`);
  return err;
}

/** Sends raw messages on a fresh socket (after the challenge) and returns how it closed. */
async function sendRaw(url: string, ...messages: (string | Buffer)[]): Promise<WireCloseInfo> {
  const { ws, closed } = await openMediaSocket(url);
  for (const m of messages) ws.send(m);
  return closed;
}

describe('media handshake', () => {
  let server: ServedPlatform;
  let issuer: TokenIssuer;
  let mediaUrl: string;
  let alice: MediaSession;
  let bob: MediaSession;
  let bobFrames: ReturnType<typeof collectFrames>;
  let silent: { openedAt: number; closed: Promise<WireCloseInfo & { at: number }> };

  const speaker = (user: string, room = 'handshake-room'): Promise<TokenResponse> =>
    issuer.issue({ room_id: room, user_id: user, role: 'speaker', publish_streams: [1], subscribe_room: true });

  before(async () => {
    server = await serveMedia();
    issuer = await TokenIssuer.create(() => server.api);
    mediaUrl = server.urls['media']!;
    // a client that never sends join: checked near the end, so the 5 s wait overlaps other tests
    const openedAt = Date.now();
    const socket = await openMediaSocket(mediaUrl);
    silent = { openedAt, closed: socket.closed.then((c) => ({ ...c, at: Date.now() })) };
    // a pair that keeps talking while others misbehave
    alice = await join(await speaker('alice'));
    bob = await join(await speaker('bob'));
    bobFrames = collectFrames(bob);
  });

  after(async () => {
    await alice?.close();
    await bob?.close();
    await server?.stop();
  });

  it('joins with a token issued over HTTP, proving possession of the media key', async () => {
    const token = await speaker('carol');
    const carol = await join(token);
    assert.equal(carol.state, 'connected');
    assert.equal(carol.userId, 'carol');
    assert.equal(carol.roomId, 'handshake-room');
    assert.equal(carol.projectId, issuer.customer.projectId);
    assert.equal(carol.role, 'speaker');
    assert.equal(carol.expiresAt, token.expires_at);
    assert.match(carol.participantId, /^pa_[A-Za-z0-9_-]{16}$/);
    assert.deepEqual(carol.participants().map((p) => p.userId).sort(), ['alice', 'bob']);
    await carol.close();
  });

  it('refuses a tampered grant with 4001', async () => {
    const token = await speaker('mallory');
    const [h, , s] = token.media.grant.split('.');
    const claims = { ...grantParts(token.media.grant).claims, room: 'another-room' };
    const tampered = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
    const err = await refusal(join(withGrant(token, tampered)));
    assert.equal(err.code, 'unauthorized');
    assert.equal(err.closeCode, 4001);
  });

  it('refuses a grant signed by an unknown key, and one signed by another key under a published kid, with 4001', async () => {
    const token = await speaker('mallory');
    const { header, claims } = grantParts(token.media.grant);
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    for (const kid of ['sig-unknown', String(header['kid'])]) {
      const forged = signJws(claims, { kid, privateKey, publicKey, retireAt: undefined }, GRANT_TYPE);
      const err = await refusal(join(withGrant(token, forged)));
      assert.equal(err.closeCode, 4001, kid);
    }
  });

  it('refuses a proof made with the wrong media key with 4001', async () => {
    const token = await speaker('mallory');
    const err = await refusal(join({ ...token, media: { ...token.media, key: randomBytes(32).toString('base64url') } }));
    assert.equal(err.code, 'unauthorized');
    assert.equal(err.closeCode, 4001);
  });

  it('refuses a replayed join (proof bound to another challenge) with 4001, and a second join with 4004', async () => {
    const token = await speaker('dave');
    const first = await openMediaSocket(mediaUrl);
    const clientNonce = randomBytes(32);
    const joinText = JSON.stringify({
      type: 'join', grant: token.media.grant, nonce: clientNonce.toString('base64url'),
      proof: wireProof(Buffer.from(token.media.key, 'base64url'), token.media.grant, first.serverNonce, clientNonce).toString('base64url'),
    });
    first.ws.send(joinText);
    await new Promise((resolve) => first.ws.once('message', resolve));
    // an eavesdropper replays the recorded join on its own connection
    assert.equal((await sendRaw(mediaUrl, joinText)).code, 4001);
    // the same join twice on one connection
    const twice = await openMediaSocket(mediaUrl);
    const nonce2 = randomBytes(32);
    const join2 = JSON.stringify({
      type: 'join', grant: token.media.grant, nonce: nonce2.toString('base64url'),
      proof: wireProof(Buffer.from(token.media.key, 'base64url'), token.media.grant, twice.serverNonce, nonce2).toString('base64url'),
    });
    twice.ws.send(join2);
    twice.ws.send(join2);
    assert.equal((await twice.closed).code, 4004);
    first.ws.close();
  });

  it('refuses an expired grant with 4002', async () => {
    const token = await issuer.issue({ room_id: 'handshake-room', user_id: 'erin', role: 'speaker', ttl_seconds: 1 });
    await waitPastExpiry(token.expires_at);
    const err = await refusal(join(token));
    assert.equal(err.code, 'expired');
    assert.equal(err.closeCode, 4002);
  });

  it('closes malformed handshake messages with 4004', async () => {
    const token = await speaker('mallory');
    const b32 = randomBytes(32).toString('base64url');
    const cases: [string, string | Buffer][] = [
      ['not JSON', '{"type":"join",'],
      ['a JSON array', '[]'],
      ['binary before the join', Buffer.alloc(40)],
      ['an unknown message', JSON.stringify({ type: 'hello' })],
      ['an extra field', JSON.stringify({ type: 'join', grant: token.media.grant, nonce: b32, proof: b32, key: token.media.key })],
      ['a missing proof', JSON.stringify({ type: 'join', grant: token.media.grant, nonce: b32 })],
      ['a short nonce', JSON.stringify({ type: 'join', grant: token.media.grant, nonce: 'AAAA', proof: b32 })],
    ];
    for (const [name, message] of cases) {
      assert.equal((await sendRaw(mediaUrl, message)).code, 4004, name);
    }
  });

  it('closes oversized messages with 1009, before and after the join', async () => {
    assert.equal((await sendRaw(mediaUrl, 'x'.repeat(20_000))).code, 1009);
    assert.equal((await sendRaw(mediaUrl, Buffer.alloc(70_000))).code, 1009);
    const client = await WireClient.join(mediaUrl, (await speaker('frank')).media);
    client.ws.send(Buffer.alloc(65_537));
    assert.equal((await client.closed).code, 1009);
  });

  it('closes malformed traffic after the join with 4004', async () => {
    const cases: [string, (c: WireClient) => void][] = [
      ['a text message', (c) => c.ws.send('{"type":"ping","id":1}')],
      ['a binary message shorter than a frame', (c) => c.ws.send(Buffer.alloc(31))],
      ['another protocol version', (c) => {
        const m = c.sealControlRaw({ kind: 0, epoch: 0, streamId: 0, seq: 1 }, Buffer.from('{"type":"ping","id":1}'));
        m[0] = 2;
        c.ws.send(m);
      }],
      ['a control sequence gap', (c) => c.ws.send(c.sealControlRaw({ kind: 0, epoch: 0, streamId: 0, seq: 2 }, Buffer.from('{"type":"ping","id":1}')))],
      ['a control frame that does not authenticate', (c) => {
        const m = c.sealControlRaw({ kind: 0, epoch: 0, streamId: 0, seq: 1 }, Buffer.from('{"type":"ping","id":1}'));
        m[m.length - 1]! ^= 1;
        c.ws.send(m);
      }],
      ['a sealed control frame under a random key', (c) => c.ws.send(sealWire(randomBytes(32), 1, { kind: 0, epoch: 0, streamId: 0, seq: 1 }, Buffer.from('{}')))],
      ['an unknown control message', (c) => c.sendControl({ type: 'shout' })],
      ['a control message with an unknown field', (c) => c.sendControl({ type: 'ping', loud: true })],
      ['a join after the join', (c) => c.sendControl({ type: 'join', grant: 'g', nonce: 'n', proof: 'p' })],
      ['a media frame of a stream it does not publish', (c) => c.ws.send(sealWire(randomBytes(32), 3, { kind: KINDS.audio, epoch: 1, streamId: 77, seq: 1 }, Buffer.from('x')))],
    ];
    for (const [name, misbehave] of cases) {
      const client = await WireClient.join(mediaUrl, (await speaker(`m-${cases.findIndex((c) => c[0] === name)}`)).media);
      misbehave(client);
      assert.equal((await client.closed).code, 4004, name);
    }
  });

  it('closes a client that floods control messages with 4029', async () => {
    const client = await WireClient.join(mediaUrl, (await speaker('flooder')).media);
    for (let i = 0; i < 80; i++) client.sendControl({ type: 'ping' });
    assert.equal((await client.closed).code, 4029);
  });

  it('answers plain HTTP on the media port with 426 and unknown paths with 404', async () => {
    const httpUrl = mediaUrl.replace(/^ws/, 'http');
    assert.equal((await request(`${httpUrl}/v1/media`)).status, 426);
    assert.equal((await request(`${httpUrl}/elsewhere`)).status, 404);
    const elsewhere = new WebSocket(`${mediaUrl}/elsewhere`);
    const status = await new Promise<number>((resolve) => elsewhere.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
    assert.equal(status, 404);
  });

  it('closes a client that sends nothing within 5 s with 4008', async () => {
    const closed = await silent.closed;
    assert.equal(closed.code, 4008);
    const elapsed = closed.at - silent.openedAt;
    assert.ok(elapsed >= 4500 && elapsed < 7000, `closed after ${elapsed} ms`);
  });

  it('never sends the media key over the media connection (every byte of a session inspected)', async () => {
    const proxy = await TcpProxy.start(mediaUrl);
    try {
      const room = 'key-room';
      const tokens = [
        await issuer.issue({ room_id: room, user_id: 'grace', role: 'speaker', publish_streams: [1], subscribe_room: true }),
        await issuer.issue({ room_id: room, user_id: 'grace', role: 'speaker', publish_streams: [1], subscribe_room: true }),
      ];
      const henry = await join(await issuer.issue({ room_id: room, user_id: 'henry', role: 'speaker', publish_streams: [2], subscribe_room: true }));
      const henryGot = collectFrames(henry);
      const grace = await join(tokens[0]!, { url: proxy.url, getToken: async () => tokens[1]! });
      const graceGot = collectFrames(grace);
      const mic = await grace.publish(1, 'audio');
      const cam = await henry.publish(2, 'video');
      await until(() => grace.streams().length === 1, 2000, 'stream 2 seen');
      for (let i = 0; i < 5; i++) {
        await mic.send(text(`g${i}`));
        await cam.send(text(`h${i}`));
      }
      await grace.renew();
      await mic.send(text('after renewal'));
      await until(() => henryGot.frames.length === 6 && graceGot.frames.length === 5, 3000, 'frames both ways');
      await grace.close();
      await henry.close();
      await until(() => proxy.captures.length === 1 && proxy.captures[0]!.down.length > 0, 2000, 'capture');
      const capture = proxy.captures[0]!;
      const up = Buffer.concat(capture.up);
      const down = Buffer.concat(capture.down);
      const payloads = [...websocketPayloads(up), ...websocketPayloads(down)];
      assert.ok(payloads.length >= 16, `the capture holds the whole session (${payloads.length} messages)`);
      assert.ok(payloads.some((p) => p.includes(Buffer.from(tokens[0]!.media.grant))), 'the join travels in clear (the grant is not secret)');
      for (const token of tokens) {
        const k = Buffer.from(token.media.key, 'base64url');
        const forms = [k, Buffer.from(token.media.key), Buffer.from(k.toString('base64')), Buffer.from(k.toString('hex')),
          Buffer.from(k.toString('hex').toUpperCase()), k.subarray(0, 16), k.subarray(16)];
        for (const form of forms) {
          assert.equal(up.includes(form), false, 'raw bytes sent by the app');
          assert.equal(down.includes(form), false, 'raw bytes sent by the server');
          for (const p of payloads) assert.equal(p.includes(form), false, 'a WebSocket payload');
        }
      }
    } finally {
      await proxy.close();
    }
  });

  it('kept every other session working throughout', async () => {
    const stream = await alice.publish(1, 'audio');
    for (let i = 0; i < 3; i++) await stream.send(text(`still here ${i}`));
    await until(() => bobFrames.texts().filter((t) => t.startsWith('1:still here')).length === 3, 3000, 'frames');
    assert.deepEqual(bobFrames.texts(), ['1:still here 0', '1:still here 1', '1:still here 2']);
    assert.equal(alice.state, 'connected');
    assert.equal(bob.state, 'connected');
  });
});
