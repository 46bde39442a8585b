/**
 * werift's RTP and RTCP header parses, field for field, without their cost: werift reads each bit
 * field by printing the byte in binary and parsing the digits back, and copies its list of extensions
 * at each one it adds. Its SRTP reads every packet's header with them while decrypting, and its
 * transport again after. The RTP parse runs only on a header rtp/rtp-check.ts passed (its CSRCs and
 * extension elements lie within the bytes). input-guard.ts installs both in werift's place;
 * `rtp-header-parse.test.ts` compares them with werift's own on every shape of header.
 */
import { RtcpHeader, RtpHeader, type Extension } from 'werift';

const ONE_BYTE_PROFILE = 0xbede;
const TWO_BYTE_PROFILE = 0x1000;

export function parseRtpHeader(raw: Buffer): RtpHeader {
  const h = new RtpHeader();
  const first = raw[0]!;
  const second = raw[1]!;
  h.version = first >> 6;
  h.padding = (first & 0x20) !== 0;
  h.extension = (first & 0x10) !== 0;
  const csrcs = first & 0x0f;
  h.csrcLength = csrcs;
  const csrc = new Array<number>(csrcs);
  for (let i = 0; i < csrcs; i += 1) csrc[i] = raw.readUInt32BE(12 + 4 * i);
  h.csrc = csrc;
  h.marker = (second & 0x80) !== 0;
  h.payloadType = second & 0x7f;
  h.sequenceNumber = raw.readUInt16BE(2);
  h.timestamp = raw.readUInt32BE(4);
  h.ssrc = raw.readUInt32BE(8);
  let pos = 12 + 4 * csrcs;
  if (h.extension) {
    const profile = raw.readUInt16BE(pos);
    const length = raw.readUInt16BE(pos + 2) * 4;
    h.extensionProfile = profile as RtpHeader['extensionProfile']; // werift's type names two profiles, its parse keeps any
    h.extensionLength = length;
    pos += 4;
    const end = pos + length;
    const extensions: Extension[] = [];
    if (profile === ONE_BYTE_PROFILE) {
      while (pos < end) {
        const byte = raw[pos]!;
        pos += 1;
        if (byte === 0) continue;
        // werift stops at ID 15, its payload offset just past that byte
        if (byte >> 4 === 0xf) break;
        const size = (byte & 0x0f) + 1;
        extensions.push({ id: byte >> 4, payload: raw.subarray(pos, pos + size) });
        pos += size;
      }
    } else if (profile === TWO_BYTE_PROFILE) {
      while (pos < end) {
        const id = raw[pos]!;
        if (id === 0) {
          pos += 1;
          continue;
        }
        const size = raw[pos + 1]!;
        pos += 2;
        extensions.push({ id, payload: raw.subarray(pos, pos + size) });
        pos += size;
      }
    } else {
      extensions.push({ id: 0, payload: raw.subarray(pos, end) });
      pos = end;
    }
    h.extensions = extensions;
  }
  h.payloadOffset = pos;
  if (h.padding) h.paddingSize = raw[raw.length - 1]!;
  return h;
}

/** werift's RTCP header parse, field for field (it reads its bit fields the same way); throws on fewer than 4 bytes, as werift's does. */
export function parseRtcpHeader(raw: Buffer): RtcpHeader {
  if (raw.length < 4) throw new RangeError(`an RTCP header needs 4 bytes, got ${raw.length}`);
  const first = raw[0]!;
  return new RtcpHeader({ version: first >> 6, padding: (first & 0x20) !== 0, count: first & 0x1f, type: raw[1]!, length: raw.readUInt16BE(2) });
}
