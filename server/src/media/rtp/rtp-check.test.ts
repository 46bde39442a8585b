import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RtpHeader } from 'werift';
import { rtpWithExtensions } from '../../../../test/helpers/hostile-rtcp.ts';
import { checkRtpHeader, MAX_RTP_EXTENSIONS } from './rtp-check.ts';

const refusal = (data: Buffer): string | undefined => {
  const check = checkRtpHeader(data);
  return check.ok ? undefined : check.reason;
};

describe('checkRtpHeader', () => {
  it('accepts the headers the node sends: mid, playout delay and transport-wide sequence number', () => {
    const header = new RtpHeader({ ssrc: 7, payloadType: 96, sequenceNumber: 1, timestamp: 2, marker: true });
    header.extensions.push({ id: 1, payload: Buffer.from('0') }, { id: 2, payload: Buffer.from([1, 2, 3]) }, { id: 3, payload: Buffer.from([0, 9]) });
    header.extension = true;
    const bytes = Buffer.concat([header.serialize(header.serializeSize), Buffer.from([1, 2, 3])]);
    assert.deepEqual(checkRtpHeader(bytes), { ok: true, extensions: 3 });
    assert.deepEqual(checkRtpHeader(Buffer.concat([new RtpHeader({ ssrc: 7 }).serialize(12), Buffer.alloc(20)])), { ok: true, extensions: 0 });
  });

  it('refuses an extension block claiming more than the packet holds (werift would read 262,140 bytes past its end)', () => {
    assert.equal(refusal(rtpWithExtensions(1, 0xffff)), 'extensions');
    assert.equal(refusal(rtpWithExtensions(2)), undefined);
  });

  it('refuses more extension elements than MAX_RTP_EXTENSIONS (werift copies its list at each one)', () => {
    assert.equal(refusal(rtpWithExtensions(MAX_RTP_EXTENSIONS)), undefined);
    assert.equal(refusal(rtpWithExtensions(MAX_RTP_EXTENSIONS + 1)), 'too_many_extensions');
    assert.equal(refusal(rtpWithExtensions(600)), 'too_many_extensions');
  });

  it('refuses a short packet, a CSRC list past its end, a version other than 2, and an element past the block', () => {
    assert.equal(refusal(Buffer.alloc(11, 0x80)), 'truncated');
    const csrcs = Buffer.alloc(16);
    csrcs[0] = 0x8f;
    assert.equal(refusal(csrcs), 'truncated');
    const v1 = rtpWithExtensions(1);
    v1[0] = 0x50;
    assert.equal(refusal(v1), 'version');
    // one element claiming 16 bytes in a block of one word
    const long = rtpWithExtensions(1, 1);
    long[16] = 0x1f;
    assert.equal(refusal(long), 'extensions');
  });

  it('accepts only headers werift parses within the packet, with at most MAX_RTP_EXTENSIONS elements', () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 12, maxLength: 120 }), fc.boolean(), (bytes, oneByte) => {
      const data = Buffer.from(bytes);
      data[0] = 0x90 | (data[0]! & 0x2f);
      data[12] = oneByte ? 0xbe : 0x10;
      data[13] = oneByte ? 0xde : 0x00;
      if (data.length > 15) data.writeUInt16BE(data[14]! % 8, 14);
      const check = checkRtpHeader(data);
      if (!check.ok) return;
      const header = RtpHeader.deSerialize(data);
      assert.ok(header.payloadOffset <= data.length);
      assert.ok(header.extensions.length <= MAX_RTP_EXTENSIONS);
      assert.equal(header.extensions.length, check.extensions);
    }), { numRuns: 2000 });
  });
});
