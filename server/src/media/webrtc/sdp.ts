/**
 * The little the media server reads of a client's SDP offer before handing it to the WebRTC stack
 * (docs/protocol/media.md, "Negotiation"): that it names a DTLS fingerprint, and the kind of each
 * m-line by mid. And the one change it makes to its answer: the announced address.
 */

export interface OfferScan {
  readonly fingerprint: boolean;
  /** Every m-line, of any kind. */
  readonly mlines: number;
  /** Media kind of every audio and video m-line, by mid. */
  readonly kinds: ReadonlyMap<string, 'audio' | 'video'>;
}

/** Undefined for text that is not an SDP offer at all. */
export function scanOffer(sdp: string): OfferScan | undefined {
  const lines = sdp.split(/\r?\n/);
  if (lines[0] !== 'v=0') return undefined;
  let fingerprint = false;
  let mlines = 0;
  let kind: string | undefined;
  const kinds = new Map<string, 'audio' | 'video'>();
  for (const line of lines) {
    if (line.startsWith('m=')) {
      kind = line.slice(2).split(' ', 1)[0];
      mlines += 1;
    } else if (line.startsWith('a=fingerprint:sha-256 ')) {
      fingerprint = true;
    } else if (line.startsWith('a=mid:') && (kind === 'audio' || kind === 'video')) {
      kinds.set(line.slice('a=mid:'.length).trim(), kind);
    }
  }
  return { fingerprint, mlines, kinds };
}

/**
 * Replaces the address of every host candidate by `publicIp` (a media node behind a 1:1 NAT,
 * docs/operations/configuration.md "WebRTC"), and drops the candidates of other families.
 */
export function announce(sdp: string, publicIp: string | undefined): string {
  if (!publicIp) return sdp;
  const seen = new Set<string>();
  return sdp.split('\r\n').flatMap((line) => {
    if (!line.startsWith('a=candidate:')) return [line];
    const parts = line.split(' ');
    // foundation component transport priority address port "typ" type ...
    if (parts.length < 8 || parts[7] !== 'host') return [line];
    parts[4] = publicIp;
    const key = `${parts[1]} ${parts[2]} ${parts[5]}`;
    if (seen.has(key)) return [];
    seen.add(key);
    return [parts.join(' ')];
  }).join('\r\n');
}
