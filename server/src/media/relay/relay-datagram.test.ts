import assert from 'node:assert/strict';
import { createSecretKey, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { DATAGRAM_HEADER_BYTES, DATAGRAM_REPLAY_WINDOW, DatagramOpener, DatagramSealer, DatagramType, MAX_DATAGRAM_PAYLOAD } from './relay-datagram.ts';

const LINK = 0x0a0b0c0d;
const pair = (): { sealer: DatagramSealer; opener: DatagramOpener } => {
  const key = createSecretKey(randomBytes(16));
  return { sealer: new DatagramSealer(key, LINK), opener: new DatagramOpener(key, LINK) };
};
const joined = (parts: readonly Buffer[]): Buffer => Buffer.concat(parts);

describe('relay datagrams (docs/protocol/relay.md, "Datagrams")', () => {
  it('open to the sealed packet, with its type, track and layer, and the payload is not in clear', () => {
    const { sealer, opener } = pair();
    const packet = Buffer.from('an rtp packet of the origin, forwarded as received'.repeat(10));
    const datagram = joined(sealer.seal(DatagramType.rtp, 42, 2, packet));
    assert.equal(datagram.length, DATAGRAM_HEADER_BYTES + packet.length + 16);
    assert.equal(datagram.indexOf(packet.subarray(0, 16)), -1);
    const opened = opener.open(datagram);
    assert.ok(opened.ok);
    assert.deepEqual(opened.header, { type: DatagramType.rtp, layer: 2, link: LINK, sequence: 1, track: 42 });
    assert.deepEqual(opened.payload, packet);
  });

  it('drop a datagram with any byte changed, in the header, the ciphertext or the tag, as auth (or malformed where it breaks the layout)', () => {
    const { sealer, opener } = pair();
    const original = joined(sealer.seal(DatagramType.rtp, 7, 0, randomBytes(200)));
    for (let i = 0; i < original.length; i++) {
      if (i >= 4 && i < 8) continue; // the link id: routed to another link by the endpoint (unknown_link below)
      const tampered = Buffer.from(original);
      tampered[i]! ^= 0x01;
      const opened = opener.open(tampered);
      assert.equal(opened.ok, false, `byte ${i} changed was accepted`);
      // version, type, the sequence's top byte (past 2^53) and its last (1 becomes 0) are refused before the cipher; the rest fails to authenticate
      const expected = i < 2 || i === 8 || i === 15 ? 'malformed' : 'auth';
      assert.equal(!opened.ok && opened.reason, expected, `byte ${i}`);
    }
    // the untouched datagram still opens: no forgery moved the replay window
    assert.ok(opener.open(original).ok);
  });

  it('drop a datagram for another link as unknown_link, and a short or oversized one as malformed', () => {
    const { sealer } = pair();
    const other = new DatagramOpener(createSecretKey(randomBytes(16)), LINK + 1);
    const d = joined(sealer.seal(DatagramType.rtp, 1, 0, randomBytes(10)));
    assert.deepEqual(other.open(d), { ok: false, reason: 'unknown_link' });
    const { opener } = pair();
    assert.deepEqual(opener.open(d.subarray(0, 30)), { ok: false, reason: 'malformed' });
    assert.deepEqual(opener.open(Buffer.alloc(DATAGRAM_HEADER_BYTES + MAX_DATAGRAM_PAYLOAD + 17, 1)), { ok: false, reason: 'malformed' });
    assert.throws(() => sealer.seal(DatagramType.rtp, 1, 0, Buffer.alloc(MAX_DATAGRAM_PAYLOAD + 1)), TypeError);
  });

  it('drop a datagram sealed under another key as auth', () => {
    const a = pair();
    const b = pair();
    assert.deepEqual(b.opener.open(joined(a.sealer.seal(DatagramType.rtp, 1, 0, randomBytes(10)))), { ok: false, reason: 'auth' });
  });

  it('accept each sequence number once: a replay, or one older than the window, is dropped as replay; reordering within it is accepted', () => {
    const { sealer, opener } = pair();
    const sent = Array.from({ length: DATAGRAM_REPLAY_WINDOW + 10 }, (_, i) => joined(sealer.seal(DatagramType.rtp, 1, 0, Buffer.from([i & 0xff]))));
    assert.ok(opener.open(sent[1]!).ok);
    assert.ok(opener.open(sent[0]!).ok, 'a datagram overtaken by a later one is still accepted');
    assert.deepEqual(opener.open(sent[1]!), { ok: false, reason: 'replay' });
    assert.deepEqual(opener.open(sent[0]!), { ok: false, reason: 'replay' });
    assert.ok(opener.open(sent.at(-1)!).ok);
    assert.deepEqual(opener.open(sent[5]!), { ok: false, reason: 'replay' }, 'older than the window');
    assert.ok(opener.open(sent.at(-2)!).ok);
    assert.deepEqual(opener.open(sent.at(-1)!), { ok: false, reason: 'replay' });
  });

  it('carry RTCP and keepalives under the same sequence', () => {
    const { sealer, opener } = pair();
    const rtcp = opener.open(joined(sealer.seal(DatagramType.rtcp, 3, 1, Buffer.from([0x81, 0xc9]))));
    const keepalive = opener.open(joined(sealer.seal(DatagramType.keepalive, 0, 0, Buffer.alloc(0))));
    assert.ok(rtcp.ok && keepalive.ok);
    assert.deepEqual([rtcp.header.type, rtcp.header.sequence, keepalive.header.type, keepalive.header.sequence], [DatagramType.rtcp, 1, DatagramType.keepalive, 2]);
    assert.equal(keepalive.payload.length, 0);
  });
});
