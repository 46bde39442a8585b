import { MAX_SIMULCAST_LAYERS } from '@rtc/protocol';

/**
 * The little the media server reads of a client's SDP offer before handing it to the WebRTC stack
 * (docs/protocol/media.md, "Negotiation"): that it names a DTLS fingerprint, and the kind of each
 * m-line by mid. And the one change it makes to its answer: the announced address.
 */

export interface OfferScan {
  /** The offer's one SHA-256 fingerprint; undefined when it has none, several, or another kind. */
  readonly fingerprint: string | undefined;
  /** Distinct remote ICE candidates, of every m-line. */
  readonly candidates: number;
  /** Whether every m-line is audio or video (no data channel, no other kind). */
  readonly mediaOnly: boolean;
  /** Whether the offer lets the server be the DTLS client (`a=setup:actpass` or `passive` only). */
  readonly serverIsDtlsClient: boolean;
  /** Every m-line, of any kind. */
  readonly mlines: number;
  /** Media kind of every audio and video m-line, by mid. */
  readonly kinds: ReadonlyMap<string, 'audio' | 'video'>;
  /** Simulcast rids each m-line sends (`a=simulcast:send`, smallest first), by mid. */
  readonly rids: ReadonlyMap<string, readonly string[]>;
  /** SSRCs each m-line names (`a=ssrc`), by mid. */
  readonly ssrcs: ReadonlyMap<string, readonly number[]>;
  /** Whether every simulcast description is one the server takes: video, at most 3 rids, no rid on two m-lines. */
  readonly simulcastOk: boolean;
  /**
   * Mids of the m-lines the offer rejects: port 0 without `a=bundle-only` (RFC 8829 5.2.2). Port 0
   * with `a=bundle-only` is a bundled m-line (5.2.1), which Firefox offers under max-bundle.
   */
  readonly rejected: ReadonlySet<string>;
}

/**
 * Undefined for text that is not an SDP offer at all, or that breaks a line other than with CRLF
 * (RFC 8866, 5): werift and the server's own reading would not see the same lines.
 */
export function scanOffer(sdp: string): OfferScan | undefined {
  if (/\r(?!\n)|(?<!\r)\n/.test(sdp)) return undefined;
  const lines = sdp.split('\r\n');
  if (lines[0] !== 'v=0') return undefined;
  const fingerprints = new Set<string>();
  let mlines = 0;
  const candidates = new Set<string>();
  let mediaOnly = true;
  let serverIsDtlsClient = true;
  let kind: string | undefined;
  const kinds = new Map<string, 'audio' | 'video'>();
  const rids = new Map<string, string[]>();
  const ssrcs = new Map<string, number[]>();
  const allRids = new Set<string>();
  let simulcastOk = true;
  const rejected = new Set<string>();
  let mid: string | undefined;
  let sectionRids: string[] = [];
  let sectionSsrcs: number[] = [];
  let portZero = false;
  let bundleOnly = false;
  const endSection = (): void => {
    if (mid !== undefined) {
      if (sectionRids.length > 0) rids.set(mid, sectionRids);
      if (sectionSsrcs.length > 0) ssrcs.set(mid, sectionSsrcs);
      if (portZero && !bundleOnly) rejected.add(mid);
    }
    mid = undefined;
    sectionRids = [];
    sectionSsrcs = [];
    portZero = false;
    bundleOnly = false;
  };
  for (const line of lines) {
    if (line.startsWith('m=')) {
      endSection();
      kind = line.slice(2).split(' ', 1)[0];
      portZero = line.split(' ')[1] === '0';
      mlines += 1;
      if (kind !== 'audio' && kind !== 'video') mediaOnly = false;
    } else if (line.trim() === 'a=bundle-only') {
      bundleOnly = true;
    } else if (line.startsWith('a=fingerprint:')) {
      // every m-line repeats the session's one certificate; another algorithm is refused, not weighed
      fingerprints.add(line.trim().toLowerCase());
    } else if (line.startsWith('a=setup:')) {
      const setup = line.slice('a=setup:'.length).trim();
      if (setup !== 'actpass' && setup !== 'passive') serverIsDtlsClient = false;
    } else if (line.startsWith('a=candidate:')) {
      candidates.add(line.trim());
    } else if (line.startsWith('a=mid:') && (kind === 'audio' || kind === 'video')) {
      mid = line.slice('a=mid:'.length).trim();
      kinds.set(mid, kind);
    } else if (line.startsWith('a=simulcast:')) {
      // a=simulcast:send q;h;f (alternatives after a comma are not taken: the first of each is the layer)
      const match = /^a=simulcast:send\s+(\S+)\s*$/.exec(line.trim());
      const list = match ? match[1]!.split(';').map((r) => r.split(',')[0]!.replace(/^~/, '')) : [];
      if (kind !== 'video' || list.length === 0 || list.length > MAX_SIMULCAST_LAYERS || list.some((r) => !RID.test(r) || allRids.has(r))) {
        simulcastOk = false;
      }
      for (const r of list) allRids.add(r);
      sectionRids = list;
    } else if (line.startsWith('a=ssrc:')) {
      const ssrc = Number(line.slice('a=ssrc:'.length).split(' ', 1)[0]);
      if (Number.isInteger(ssrc) && !sectionSsrcs.includes(ssrc) && sectionSsrcs.length < 4) sectionSsrcs.push(ssrc);
    }
  }
  endSection();
  const [only] = fingerprints;
  const fingerprint = fingerprints.size === 1 && only?.startsWith('a=fingerprint:sha-256 ') ? only : undefined;
  return { fingerprint, mlines, kinds, rids, ssrcs, simulcastOk, rejected, candidates: candidates.size, mediaOnly, serverIsDtlsClient };
}

const RID = /^[A-Za-z0-9_-]{1,16}$/;

/**
 * Adds the feedback the server gives itself rather than through werift (options.ts): transport-cc on
 * every codec, and NACK on video, to each m-line of the answer that the offer asked for them on.
 */
export function addFeedback(answer: string, offer: string): string {
  const offered = new Set(offer.split(/\r?\n/).filter((l) => l.startsWith('a=rtcp-fb:')).map((l) => l.slice('a=rtcp-fb:'.length).split(' ').slice(1).join(' ').trim()));
  const sections = answer.split('\r\nm=');
  return sections.map((section, i) => {
    if (i === 0) return section;
    const video = section.startsWith('video ');
    const extra: string[] = [];
    for (const match of section.matchAll(/\r\na=rtpmap:(\d+) /g)) {
      const pt = match[1]!;
      if (offered.has('transport-cc')) extra.push(`a=rtcp-fb:${pt} transport-cc`);
      if (video && offered.has('nack')) extra.push(`a=rtcp-fb:${pt} nack`);
    }
    if (extra.length === 0) return section;
    const lines = section.split('\r\n');
    const at = lines.findIndex((l) => l.startsWith('a=rtpmap:'));
    lines.splice(at + 1, 0, ...extra);
    return lines.join('\r\n');
  }).join('\r\nm=');
}

/** The header extension ids an SDP names (`a=extmap`), by URI. */
export function extensionIds(sdp: string): Map<string, number> {
  const ids = new Map<string, number>();
  for (const match of sdp.matchAll(/^a=extmap:(\d+)(?:\/\S+)? (\S+)/gm)) ids.set(match[2]!, Number(match[1]));
  return ids;
}

/**
 * The offer without the candidates whose address `mayOffer` refuses (docs/operations/configuration.md,
 * "Peer addresses"), its lines split as werift's parser splits them (CRLF, or LF in text without
 * any CRLF). The stack's pair filter (options.ts) weighs what is left again, once resolved.
 */
export function withoutCandidates(sdp: string, mayOffer: (address: string) => boolean): string {
  const crlf = sdp.split('\r\n');
  const [lines, separator] = crlf.length === 1 ? [sdp.split('\n'), '\n'] : [crlf, '\r\n'];
  // a=candidate:<foundation> <component> <transport> <priority> <address> <port> typ <type> ...
  return lines.filter((line) => !line.startsWith('a=candidate:') || mayOffer(line.split(' ')[4] ?? '')).join(separator);
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

/**
 * werift answers an inactive m-line with port 0, which marks it rejected: the browser would then
 * stop its transceiver and leave its mid out of the next offer's BUNDLE group, which werift still
 * lists, and refuse that answer. An m-line the offer kept open (a non-zero port, or port 0 with
 * `a=bundle-only`) stays open: port 9, inactive, in BUNDLE. One the offer itself rejected
 * (`rejected`, OfferScan) keeps port 0 and leaves the BUNDLE group (RFC 8829 5.3.1).
 */
export function keepInactiveOpen(answer: string, rejected: ReadonlySet<string>): string {
  const sections = answer.split('\r\nm=');
  const out = sections.map((section, i) => {
    if (i === 0) return section;
    const mid = /\r\na=mid:([^\r\n]+)/.exec(section)?.[1]?.trim();
    if (mid === undefined) return section;
    if (rejected.has(mid)) return section.replace(/^(\S+) \d+ /, '$1 0 ');
    return section.replace(/^(\S+) 0 /, '$1 9 ');
  });
  const joined = out.join('\r\nm=');
  if (rejected.size === 0) return joined;
  return joined.replace(/^a=group:BUNDLE (.*)$/m, (_line, mids: string) =>
    `a=group:BUNDLE ${mids.split(' ').filter((m) => !rejected.has(m)).join(' ')}`);
}
