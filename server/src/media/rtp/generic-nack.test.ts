import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GenericNack, RtcpPacketConverter, RtcpTransportLayerFeedback } from 'werift';
import { buildGenericNacks } from './generic-nack.ts';

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Reads the FCI entries (PID, BLP) of a generic NACK byte by byte (RFC 4585 section 6.2.1). */
function fci(buf: Buffer): [number, number][] {
  assert.equal(buf[0]! & 0x1f, 1, 'FMT 1');
  assert.equal(buf[1], 205);
  assert.equal((buf.readUInt16BE(2) + 1) * 4, buf.length);
  const out: [number, number][] = [];
  for (let at = 12; at < buf.length; at += 4) out.push([buf.readUInt16BE(at), buf.readUInt16BE(at + 2)]);
  return out;
}

function lostOf(fb: RtcpTransportLayerFeedback): number[] {
  const [back] = RtcpPacketConverter.deSerialize(fb.serialize());
  assert.ok(back instanceof RtcpTransportLayerFeedback && back.feedback instanceof GenericNack);
  return back.feedback.lost;
}

describe('buildGenericNacks', () => {
  it('returns nothing for no numbers', () => {
    assert.deepEqual(buildGenericNacks(1, 2, []), []);
  });

  it('packs a number and the 16 after it into one entry', () => {
    const [fb, ...rest] = buildGenericNacks(0x01020304, 0x0a0b0c0d, [3, 4, 6, 19]);
    assert.equal(rest.length, 0);
    assert.ok(fb);
    const buf = fb.serialize();
    assert.equal(buf.readUInt32BE(4), 0x01020304);
    assert.equal(buf.readUInt32BE(8), 0x0a0b0c0d);
    assert.deepEqual(fci(buf), [[3, 0b1000_0000_0000_0101]]);
    assert.deepEqual(lostOf(fb), [3, 4, 6, 19]);
  });

  it('starts a new entry 17 past the PID and across the wrap', () => {
    const [fb] = buildGenericNacks(1, 2, [10, 27, 65534, 65535, 0, 1]);
    assert.ok(fb);
    assert.deepEqual(fci(fb.serialize()), [[10, 0], [27, 0], [65534, 1], [0, 1]]);
    assert.deepEqual(lostOf(fb), [10, 27, 65534, 65535, 0, 1]);
  });

  it('splits into messages of at most 250 entries', () => {
    const seqs = Array.from({ length: 600 }, (_, i) => (i * 20) & 0xffff);
    const fbs = buildGenericNacks(1, 2, seqs);
    assert.deepEqual(fbs.map((fb) => fci(fb.serialize()).length), [250, 250, 100]);
    assert.ok(fbs.every((fb) => fb.serialize().length <= 12 + 4 * 250));
    assert.deepEqual(fbs.flatMap(lostOf), seqs);
  });

  it('packs 500 consecutive numbers into one message', () => {
    const seqs = range(65300, 65799).map((s) => s & 0xffff);
    const fbs = buildGenericNacks(1, 2, seqs);
    assert.equal(fbs.length, 1);
    assert.deepEqual(fbs.flatMap(lostOf), seqs);
  });

});
