/**
 * The checks an RTP header from a client passes before werift parses it (docs/decisions.md, "What a
 * client's RTP and RTCP may cost"). Pure: bytes in, a verdict out, in one pass over the header.
 *
 * werift's header parser walks the header extension block by the length the packet claims, past the
 * end of the packet if it says so, and copies its list of extensions at each element it adds: an
 * extension length of 65,535 words on a 16-byte packet costs it billions of copies. A header passes
 * here only when its CSRCs and its extension block lie within the packet, each extension element
 * within the block, and the block holds at most MAX_RTP_EXTENSIONS elements.
 */

/**
 * Extension elements a header may carry. The one-byte form has 14 usable IDs and a client uses a
 * handful (mid, rid, transport-cc, audio level, abs-send-time, ...); each element costs werift a
 * copy of the list so far.
 */
export const MAX_RTP_EXTENSIONS = 16;

/** RFC 8285: the one-byte form's profile, and the two-byte form's (its low 4 bits are app bits werift does not accept). */
const ONE_BYTE_PROFILE = 0xbede;
const TWO_BYTE_PROFILE = 0x1000;

export type RtpRefusal = 'truncated' | 'version' | 'extensions' | 'too_many_extensions';

export type RtpCheck = { readonly ok: true; readonly extensions: number } | { readonly ok: false; readonly reason: RtpRefusal };

/**
 * Checks the header of an RTP packet (RFC 3550 section 5.1, RFC 8285): version 2, the CSRC list and
 * the extension block within `data` (which may be a whole packet, or an SRTP packet without its
 * authentication tag: its payload is not read), and the extension elements within the block.
 */
export function checkRtpHeader(data: Uint8Array): RtpCheck {
  if (data.length < 12) return { ok: false, reason: 'truncated' };
  const first = data[0]!;
  if (first >> 6 !== 2) return { ok: false, reason: 'version' };
  let pos = 12 + 4 * (first & 0x0f);
  if (pos > data.length) return { ok: false, reason: 'truncated' };
  if ((first & 0x10) === 0) return { ok: true, extensions: 0 };
  if (pos + 4 > data.length) return { ok: false, reason: 'truncated' };
  const profile = (data[pos]! << 8) | data[pos + 1]!;
  const end = pos + 4 + ((data[pos + 2]! << 8) | data[pos + 3]!) * 4;
  if (end > data.length) return { ok: false, reason: 'extensions' };
  pos += 4;
  // any other profile is one opaque element to werift
  if (profile !== ONE_BYTE_PROFILE && profile !== TWO_BYTE_PROFILE) return { ok: true, extensions: 1 };
  let extensions = 0;
  while (pos < end) {
    const byte = data[pos]!;
    // padding between elements
    if (byte === 0) {
      pos += 1;
      continue;
    }
    let length: number;
    if (profile === ONE_BYTE_PROFILE) {
      // ID 15 ends the block (werift stops reading there)
      if (byte >> 4 === 0xf) break;
      length = 1 + (byte & 0x0f);
      pos += 1;
    } else {
      if (pos + 2 > end) return { ok: false, reason: 'extensions' };
      length = data[pos + 1]!;
      pos += 2;
    }
    if (pos + length > end) return { ok: false, reason: 'extensions' };
    extensions += 1;
    if (extensions > MAX_RTP_EXTENSIONS) return { ok: false, reason: 'too_many_extensions' };
    pos += length;
  }
  return { ok: true, extensions };
}
