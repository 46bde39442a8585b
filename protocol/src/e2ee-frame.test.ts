import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clearBytes, decodeTrailer, e2eeNonce, encodeTrailer, E2EE_TRAILER_BYTES } from './e2ee-frame.ts';

describe('encrypted encoded frame layout', () => {
  it('keeps the Opus TOC byte and the VP8 payload header clear', () => {
    assert.equal(clearBytes('audio', new Uint8Array(60)), 1);
    assert.equal(clearBytes('video', Uint8Array.of(0x10, ...new Uint8Array(40))), 10, 'key frame: P bit 0');
    assert.equal(clearBytes('video', Uint8Array.of(0x11, ...new Uint8Array(40))), 3, 'delta frame: P bit 1');
    assert.equal(clearBytes('video', Uint8Array.of(0x10, 1)), 2, 'never more than the frame');
    assert.equal(clearBytes('audio', new Uint8Array(0)), 0);
  });

  it('writes and reads the trailer at the end of a frame', () => {
    const trailer = encodeTrailer({ epoch: 0xfffe, seq: 2 ** 40 + 5, clear: 10 });
    assert.equal(trailer.length, E2EE_TRAILER_BYTES);
    assert.equal(trailer[11], 0xe2);
    const frame = new Uint8Array(10 + 30 + 16 + E2EE_TRAILER_BYTES);
    frame.set(trailer, frame.length - E2EE_TRAILER_BYTES);
    assert.deepEqual(decodeTrailer(frame), { epoch: 0xfffe, seq: 2 ** 40 + 5, clear: 10 });
  });

  it('refuses what cannot be an encrypted frame', () => {
    const frame = (t: Uint8Array, before = 30): Uint8Array => {
      const f = new Uint8Array(before + t.length);
      f.set(t, before);
      return f;
    };
    assert.equal(decodeTrailer(new Uint8Array(27)), undefined, 'shorter than tag and trailer');
    const good = encodeTrailer({ epoch: 1, seq: 1, clear: 1 });
    const unmarked = Uint8Array.from(good);
    unmarked[11] = 0;
    assert.equal(decodeTrailer(frame(unmarked)), undefined, 'no marker');
    assert.equal(decodeTrailer(frame(encodeTrailer({ epoch: 1, seq: 0, clear: 1 }))), undefined, 'sequence 0');
    assert.equal(decodeTrailer(frame(encodeTrailer({ epoch: 1, seq: 1, clear: 20 }), 16 + 10)), undefined, 'clear bytes beyond the ciphertext');
    assert.deepEqual(decodeTrailer(frame(good)), { epoch: 1, seq: 1, clear: 1 });
  });

  it('makes nonces of label 4 that differ by sequence number', () => {
    assert.deepEqual([...e2eeNonce(1)], [0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1]);
    assert.deepEqual([...e2eeNonce(2 ** 32 + 2)], [0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 2]);
  });
});
