import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RtpHeader } from 'werift';
import { HeaderBytes } from './header-bytes.ts';

/** The header werift builds for the same packet (what the downlink sent before it patched bytes). */
function werift(options: {
  ssrc: number; pt: number; seq: number; ts: number; marker: boolean; padding: boolean;
  mid?: [number, string]; playout?: [number, number]; twcc?: [number, number];
}): Buffer {
  const h = new RtpHeader({ ssrc: options.ssrc, payloadType: options.pt, sequenceNumber: options.seq, timestamp: options.ts, marker: options.marker });
  if (options.mid) h.extensions.push({ id: options.mid[0], payload: Buffer.from(options.mid[1]) });
  if (options.playout) {
    const min = options.playout[1];
    h.extensions.push({ id: options.playout[0], payload: Buffer.from([min >> 4, ((min & 0xf) << 4) | 0xf, 0xff]) });
  }
  if (options.twcc) {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(options.twcc[1]);
    h.extensions.push({ id: options.twcc[0], payload: b });
  }
  h.extension = h.extensions.length > 0;
  h.padding = options.padding;
  return h.serialize(h.serializeSize);
}

describe('header bytes', () => {
  it('writes the bytes werift writes, packet after packet, with and without each extension', () => {
    const ssrc = 0xdeadbeef;
    const h = new HeaderBytes(ssrc, 96, { mid: 1, twcc: 3, playoutDelay: 6 }, '12');
    const cases = [
      { seq: 0, ts: 0, marker: false, padding: false, twcc: 1, playout: undefined },
      { seq: 65535, ts: 0xffffffff, marker: true, padding: false, twcc: 65535, playout: 12 },
      { seq: 7, ts: 90_000, marker: false, padding: true, twcc: 2, playout: undefined },
      { seq: 8, ts: 90_000, marker: true, padding: false, twcc: 3, playout: 0xfff },
      { seq: 9, ts: 93_000, marker: false, padding: false, twcc: 4, playout: undefined },
    ];
    for (const c of cases) {
      const view = h.write(c.seq, c.ts, c.marker, c.padding, c.twcc, c.playout);
      const expected = werift({
        ssrc, pt: 96, seq: c.seq, ts: c.ts, marker: c.marker, padding: c.padding, mid: [1, '12'], twcc: [3, c.twcc],
        ...(c.playout === undefined ? {} : { playout: [6, c.playout] as [number, number] }),
      });
      assert.deepEqual(view.serialize(view.serializeSize), expected, JSON.stringify(c));
      assert.equal(view.sequenceNumber, c.seq);
      assert.equal(view.ssrc, ssrc);
    }
  });

  it('leaves out what the answer did not negotiate', () => {
    const none = new HeaderBytes(5, 111, { mid: undefined, twcc: undefined, playoutDelay: undefined }, '0');
    assert.deepEqual(none.write(3, 960, true, false, 0, 5).serialize(0), werift({ ssrc: 5, pt: 111, seq: 3, ts: 960, marker: true, padding: false }));
    const twccOnly = new HeaderBytes(5, 111, { mid: undefined, twcc: 2, playoutDelay: undefined }, undefined);
    assert.deepEqual(twccOnly.write(4, 1920, false, false, 77, 5).serialize(0),
      werift({ ssrc: 5, pt: 111, seq: 4, ts: 1920, marker: false, padding: false, twcc: [2, 77] }));
  });
});
