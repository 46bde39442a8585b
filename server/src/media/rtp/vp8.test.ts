import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseVp8, rewriteVp8 } from './vp8.ts';

interface Descriptor {
  s?: boolean;
  n?: boolean;
  pid?: number;
  /** Picture id and its width: 7 or 15 bits. */
  pictureId?: readonly [number, 7 | 15];
  tl0?: number;
  tid?: number;
  keyIdx?: number;
  /** Set X with an extension byte even when no field follows it. */
  forceX?: boolean;
}

/** Builds an RFC 7741 descriptor byte by byte, as a sender lays it out. */
function descriptor(d: Descriptor): number[] {
  const ext = (d.pictureId ? 0x80 : 0) | (d.tl0 !== undefined ? 0x40 : 0) | (d.tid !== undefined ? 0x20 : 0) | (d.keyIdx !== undefined ? 0x10 : 0);
  const x = ext !== 0 || d.forceX === true;
  const bytes = [(x ? 0x80 : 0) | (d.n ? 0x20 : 0) | (d.s ? 0x10 : 0) | (d.pid ?? 0)];
  if (!x) return bytes;
  bytes.push(ext);
  if (d.pictureId) {
    const [id, bits] = d.pictureId;
    if (bits === 15) bytes.push(0x80 | (id >>> 8), id & 0xff);
    else bytes.push(id);
  }
  if (d.tl0 !== undefined) bytes.push(d.tl0);
  if (d.tid !== undefined || d.keyIdx !== undefined) bytes.push(((d.tid ?? 0) << 6) | (d.keyIdx ?? 0));
  return bytes;
}

/** A key frame's first 10 bytes (RFC 6386 section 9.1): frame tag with P=0, start code, sizes. */
function keyFrameHeader(width: number, height: number, scale = 0): number[] {
  const w = width | (scale << 14);
  const h = height | (scale << 14);
  return [0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, w & 0xff, w >>> 8, h & 0xff, h >>> 8];
}

/** An interframe tag (P=1); bytes past it stand for ciphertext. */
const INTER = [0x31, 0x4f, 0x01];
const CIPHER = [0xde, 0xad, 0xbe, 0xef];

const packet = (...parts: number[][]): Uint8Array => Uint8Array.from(parts.flat());

describe('parseVp8', () => {
  it('reads the shortest descriptor: one byte, no extension', () => {
    const p = parseVp8(packet(descriptor({ s: true }), INTER, CIPHER));
    assert.deepEqual(p, {
      headerBytes: 1, startOfPartition: true, partitionIndex: 0, pictureId: undefined, pictureIdBits: 0,
      tl0PicIdx: undefined, temporalId: undefined, keyFrame: false, width: 0, height: 0,
    });
  });

  it('reads a key frame and its size, ignoring the scale bits', () => {
    const p = parseVp8(packet(descriptor({ s: true, pictureId: [0x1234, 15], tl0: 9, tid: 0, keyIdx: 3 }), keyFrameHeader(1280, 720, 2), CIPHER));
    assert.ok(p);
    assert.equal(p.headerBytes, 6);
    assert.equal(p.keyFrame, true);
    assert.equal(p.width, 1280);
    assert.equal(p.height, 720);
    assert.equal(p.pictureId, 0x1234);
    assert.equal(p.pictureIdBits, 15);
    assert.equal(p.tl0PicIdx, 9);
    assert.equal(p.temporalId, 0);
  });

  it('takes the largest sizes 14 bits allow', () => {
    const p = parseVp8(packet(descriptor({ s: true }), keyFrameHeader(16383, 16383, 3)));
    assert.equal(p?.width, 16383);
    assert.equal(p?.height, 16383);
  });

  it('reads every combination of I, M, L, T and K at the right offsets', () => {
    for (const pic of [undefined, [77, 7], [0x7abc, 15]] as const) {
      for (const tl0 of [undefined, 200]) {
        for (const tid of [undefined, 2]) {
          for (const keyIdx of [undefined, 17]) {
            const d = descriptor({ s: true, pid: 0, pictureId: pic, tl0, tid, keyIdx });
            const p = parseVp8(packet(d, keyFrameHeader(640, 360)));
            const label = JSON.stringify({ pic, tl0, tid, keyIdx });
            assert.ok(p, label);
            assert.equal(p.headerBytes, d.length, label);
            assert.equal(p.pictureId, pic?.[0], label);
            assert.equal(p.pictureIdBits, pic?.[1] ?? 0, label);
            assert.equal(p.tl0PicIdx, tl0, label);
            assert.equal(p.temporalId, tid, label);
            assert.equal(p.width, 640, label);
            assert.equal(p.height, 360, label);
          }
        }
      }
    }
  });

  it('leaves TID undefined when only K is set (the byte is skipped, not read)', () => {
    const p = parseVp8(packet(descriptor({ s: true, keyIdx: 5 }), INTER));
    assert.equal(p?.headerBytes, 3);
    assert.equal(p?.temporalId, undefined);
  });

  it('accepts X with an empty extension byte', () => {
    const p = parseVp8(packet(descriptor({ s: true, forceX: true }), INTER));
    assert.equal(p?.headerBytes, 2);
    assert.equal(p?.pictureIdBits, 0);
  });

  it('a 7-bit id of 127 and a 15-bit id of 32767 are read whole', () => {
    assert.equal(parseVp8(packet(descriptor({ pictureId: [127, 7] }), INTER))?.pictureId, 127);
    assert.equal(parseVp8(packet(descriptor({ pictureId: [32767, 15] }), INTER))?.pictureId, 32767);
    assert.equal(parseVp8(packet(descriptor({ pictureId: [0, 15] }), INTER))?.pictureIdBits, 15);
  });

  it('is a key frame only at S=1, PID=0 with P=0', () => {
    const key = keyFrameHeader(320, 240);
    assert.equal(parseVp8(packet(descriptor({ s: true }), key))?.keyFrame, true);
    assert.equal(parseVp8(packet(descriptor({ s: false }), key))?.keyFrame, false);
    assert.equal(parseVp8(packet(descriptor({ s: true, pid: 1 }), key))?.keyFrame, false);
    assert.equal(parseVp8(packet(descriptor({ s: true }), INTER))?.keyFrame, false);
    // not key frame starts: no size either
    assert.equal(parseVp8(packet(descriptor({ s: false }), key))?.width, 0);
  });

  it('reads the partition index and N without mistaking them for S', () => {
    const p = parseVp8(packet(descriptor({ n: true, pid: 7 }), INTER));
    assert.equal(p?.partitionIndex, 7);
    assert.equal(p?.startOfPartition, false);
  });

  it('a key frame start shorter than its 10-byte header, or without the start code, has no size', () => {
    const key = keyFrameHeader(320, 240);
    const short = parseVp8(packet(descriptor({ s: true }), key.slice(0, 9)));
    assert.equal(short?.keyFrame, true);
    assert.equal(short?.width, 0);
    assert.equal(short?.height, 0);
    const noStartCode = key.slice();
    noStartCode[4] = 0x02;
    const bad = parseVp8(packet(descriptor({ s: true }), noStartCode));
    assert.equal(bad?.keyFrame, true);
    assert.equal(bad?.width, 0);
  });

  it('never reads past the 10 clear bytes of a key frame or the 3 of an interframe', () => {
    const bytes = packet(descriptor({ s: true, pictureId: [5, 7] }), keyFrameHeader(320, 240), CIPHER);
    const reads = new Set<number>();
    const watched = new Proxy(bytes, {
      get(target, key) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads.add(Number(key));
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    assert.equal(parseVp8(watched)?.width, 320);
    assert.ok(Math.max(...reads) < 3 + 10, `read byte ${Math.max(...reads)}`);
    reads.clear();
    const inter = packet(descriptor({ s: true }), INTER, CIPHER);
    const watchedInter = new Proxy(inter, {
      get(target, key) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads.add(Number(key));
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    assert.equal(parseVp8(watchedInter)?.keyFrame, false);
    assert.ok(Math.max(...reads) < 1 + 3, `read byte ${Math.max(...reads)}`);
  });

  it('refuses truncated descriptors and packets with no VP8 byte', () => {
    const full = packet(descriptor({ s: true, pictureId: [0x1234, 15], tl0: 9, tid: 1, keyIdx: 2 }), INTER);
    // descriptor is 6 bytes: every prefix up to it lacks a field or the frame
    for (let len = 0; len <= 6; len++) assert.equal(parseVp8(full.subarray(0, len)), undefined, `length ${len}`);
    assert.ok(parseVp8(full.subarray(0, 7)));
    assert.equal(parseVp8(new Uint8Array(0)), undefined);
    assert.equal(parseVp8(Uint8Array.of(0x10)), undefined);
    assert.equal(parseVp8(Uint8Array.of(0x80)), undefined);
    assert.equal(parseVp8(Uint8Array.of(0x80, 0x80, 0x80)), undefined);
    assert.equal(parseVp8(Uint8Array.of(0x80, 0x40)), undefined);
    assert.equal(parseVp8(Uint8Array.of(0x80, 0x10)), undefined);
  });

  it('reads a descriptor inside a larger buffer (a subarray view)', () => {
    const whole = packet([0xff, 0xff], descriptor({ s: true, pictureId: [300, 15] }), keyFrameHeader(176, 144));
    const p = parseVp8(whole.subarray(2));
    assert.equal(p?.pictureId, 300);
    assert.equal(p?.width, 176);
  });
});

describe('rewriteVp8', () => {
  it('rewrites a 15-bit id and TL0PICIDX, keeping every other bit', () => {
    const bytes = packet(descriptor({ s: true, pid: 0, pictureId: [0x1234, 15], tl0: 9, tid: 2, keyIdx: 4 }), INTER, CIPHER);
    const before = bytes.slice();
    rewriteVp8(bytes, 0x0abc, 200);
    const p = parseVp8(bytes);
    assert.equal(p?.pictureId, 0x0abc);
    assert.equal(p?.pictureIdBits, 15);
    assert.equal(p?.tl0PicIdx, 200);
    assert.equal(p?.temporalId, 2);
    assert.deepEqual([...bytes.subarray(0, 2)], [...before.subarray(0, 2)]);
    assert.deepEqual([...bytes.subarray(5)], [...before.subarray(5)]);
  });

  it('keeps a 7-bit id 7 bits wide, wrapping at 128', () => {
    const bytes = packet(descriptor({ pictureId: [10, 7], tl0: 1 }), INTER);
    const length = bytes.length;
    rewriteVp8(bytes, 130, 7);
    assert.equal(parseVp8(bytes)?.pictureId, 2);
    assert.equal(parseVp8(bytes)?.pictureIdBits, 7);
    assert.equal(parseVp8(bytes)?.tl0PicIdx, 7);
    assert.equal(bytes.length, length);
    assert.deepEqual([...bytes.subarray(4)], INTER);
  });

  it('wraps a 15-bit id at 32768 and TL0PICIDX at 256', () => {
    const bytes = packet(descriptor({ pictureId: [1, 15], tl0: 1 }), INTER);
    rewriteVp8(bytes, 32768 + 5, 256 + 3);
    assert.equal(parseVp8(bytes)?.pictureId, 5);
    assert.equal(parseVp8(bytes)?.tl0PicIdx, 3);
  });

  it('leaves TL0PICIDX alone when given undefined, and fields that are absent alone', () => {
    const bytes = packet(descriptor({ pictureId: [1, 15], tl0: 42 }), INTER);
    rewriteVp8(bytes, 2, undefined);
    assert.equal(parseVp8(bytes)?.tl0PicIdx, 42);
    const onlyTl0 = packet(descriptor({ tl0: 42 }), INTER);
    const copy = onlyTl0.slice();
    rewriteVp8(onlyTl0, 99, 43);
    assert.deepEqual([...onlyTl0.subarray(0, 2)], [...copy.subarray(0, 2)]);
    assert.equal(parseVp8(onlyTl0)?.tl0PicIdx, 43);
    assert.equal(parseVp8(onlyTl0)?.pictureId, undefined);
    const plain = packet(descriptor({ s: true }), INTER);
    const plainCopy = plain.slice();
    rewriteVp8(plain, 99, 43);
    assert.deepEqual(plain, plainCopy);
  });

  it('writes nothing past a truncated descriptor', () => {
    const cut = packet(descriptor({ pictureId: [0x1234, 15] })).subarray(0, 3);
    const copy = cut.slice();
    rewriteVp8(cut, 1, 1);
    assert.deepEqual(cut, copy);
    rewriteVp8(new Uint8Array(0), 1, 1);
    rewriteVp8(Uint8Array.of(0x80), 1, 1);
  });
});
