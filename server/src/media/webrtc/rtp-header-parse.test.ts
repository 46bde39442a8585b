import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { RtcpHeader, RtpHeader } from 'werift';
import { checkRtpHeader } from '../rtp/rtp-check.ts';
import { parseRtcpHeader, parseRtpHeader } from './rtp-header-parse.ts';

// werift's own parses: this file installs nothing in their place
const weriftRtp = RtpHeader.deSerialize.bind(RtpHeader);
const weriftRtcp = RtcpHeader.deSerialize.bind(RtcpHeader);

/** A seeded generator, so that a failure names a header that can be made again. */
function random(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return Math.floor((state / 2 ** 32) * n); // the high bits: an LCG's low bits repeat within a few steps
  };
}

/** An RTP header of any shape the check passes or not: CSRCs, each extension profile, padding, ID 15, stray bytes. */
function header(next: (n: number) => number): Buffer {
  const csrcs = next(3) === 0 ? next(16) : 0;
  const extension = next(4) !== 0;
  const first = 0x80 | (next(2) << 5) | (extension ? 0x10 : 0) | csrcs;
  const parts = [Buffer.from([first, next(256)]), randomBytes(10), randomBytes(4 * csrcs)];
  if (extension) {
    const profile = [0xbede, 0x1000, 0x1001, next(0x10000)][next(4)]!;
    const elements: Buffer[] = [];
    for (let i = next(6); i > 0; i -= 1) {
      if (next(5) === 0) elements.push(Buffer.alloc(1)); // padding between elements
      if (profile === 0xbede) {
        const id = next(5) === 0 ? 15 : 1 + next(14);
        const size = next(16);
        elements.push(Buffer.from([(id << 4) | size]), randomBytes(size + 1));
      } else {
        const size = next(20);
        elements.push(Buffer.from([1 + next(255), size]), randomBytes(size));
      }
    }
    let block = Buffer.concat(elements);
    block = Buffer.concat([block, Buffer.alloc((4 - (block.length % 4)) % 4)]);
    const words = next(8) === 0 ? block.length / 4 + next(3) : block.length / 4; // sometimes a length that runs past the bytes
    parts.push(Buffer.from([profile >> 8, profile & 0xff, words >> 8, words & 0xff]), block);
  }
  parts.push(randomBytes(next(40)));
  return Buffer.concat(parts);
}

describe('werift\'s header parses without their cost', () => {
  it('reads every RTP header the check passes exactly as werift does, field for field and byte for byte', () => {
    const next = random(7);
    let compared = 0;
    const shapes = new Map<string, number>();
    for (let i = 0; i < 20_000; i += 1) {
      const raw = header(next);
      if (!checkRtpHeader(raw).ok) continue;
      const expected = weriftRtp(raw);
      assert.deepStrictEqual({ ...parseRtpHeader(raw) }, { ...expected }, `header ${raw.toString('hex')}`);
      assert.ok(parseRtpHeader(raw) instanceof RtpHeader);
      compared += 1;
      const shape = !expected.extension ? 'none' : expected.extensionProfile === 0xbede
        ? (raw.subarray(expected.payloadOffset - 1, expected.payloadOffset)[0]! >> 4 === 0xf ? 'one-byte, ID 15' : 'one-byte')
        : expected.extensionProfile === 0x1000 ? 'two-byte' : 'other';
      shapes.set(shape, (shapes.get(shape) ?? 0) + 1);
      if (expected.csrcLength > 0) shapes.set('csrc', (shapes.get('csrc') ?? 0) + 1);
      if (expected.padding) shapes.set('padding', (shapes.get('padding') ?? 0) + 1);
    }
    // the generator reaches every shape that matters, often
    assert.ok(compared > 10_000, `${compared} headers compared`);
    for (const shape of ['none', 'one-byte', 'one-byte, ID 15', 'two-byte', 'other', 'csrc', 'padding']) {
      assert.ok((shapes.get(shape) ?? 0) > 200, `${shape}: ${shapes.get(shape) ?? 0} headers`);
    }
  });

  it('reads every RTCP header as werift does and throws where it throws', () => {
    for (let first = 0; first < 256; first += 1) {
      const raw = Buffer.from([first, 200 + (first % 9), first, 255 - first]);
      assert.deepStrictEqual({ ...parseRtcpHeader(raw) }, { ...weriftRtcp(raw) });
      assert.ok(parseRtcpHeader(raw) instanceof RtcpHeader);
    }
    assert.throws(() => weriftRtcp(Buffer.from([0x80, 200, 0])));
    assert.throws(() => parseRtcpHeader(Buffer.from([0x80, 200, 0])), RangeError);
  });
});
