/**
 * Whether the server takes simulcast, as its answers tell (docs/protocol/media.md, 10.4, step 3).
 * A sender with rids poisons a Chromium peer connection with a server that does not negotiate the
 * RID header extension (the browser refuses the answer, and every later offer), so layers go out
 * only once an answer showed the extension on a video m-line. Chromium offers the extension on
 * every video m-line, so an m-line without rids can ask; Firefox offers it only on an m-line whose
 * sender has rids, so there only layers can ask, and an answer that declines them leaves the first.
 */

const RID_EXTENSION = /^a=extmap:\d+(\/\w+)? urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id(\s|$)/;

/** A video m-line of an offer or answer: whether it negotiates the RID header extension, and takes simulcast. */
export interface VideoSection {
  readonly rid: boolean;
  readonly simulcast: boolean;
}

/**
 * The video m-lines of an offer or answer (those not rejected), by mid: whether each has the RID
 * header extension (RFC 8852), which simulcast needs to tell layers apart, and simulcast.
 */
export function readVideoSdp(sdp: string): ReadonlyMap<string, VideoSection> {
  const m = new Map<string, VideoSection>();
  for (const section of sdp.split(/\r?\n(?=m=)/)) {
    const lines = section.split(/\r?\n/);
    const media = /^m=(\w+) (\d+)/.exec(lines[0] ?? '');
    const mid = lines.find((l) => l.startsWith('a=mid:'))?.slice('a=mid:'.length).trim();
    if (!media || media[1] !== 'video' || media[2] === '0' || mid === undefined) continue;
    const rid = lines.some((l) => RID_EXTENSION.test(l));
    m.set(mid, { rid, simulcast: rid && lines.some((l) => l.startsWith('a=simulcast:')) });
  }
  return m;
}

/** What a peer connection's offers and answers told of the server and the browser about simulcast. */
export class SimulcastAnswers {
  /** Whether the server takes simulcast; undefined until an answer told. */
  capable: boolean | undefined;
  /** The browser offered a sending video m-line without rids without the RID extension: such an m-line cannot ask. */
  private onlyLayersAsk = false;

  /** `capable`: what an earlier peer connection of the same media connection learned. */
  constructor(capable: boolean | undefined) {
    this.capable = capable;
  }

  /**
   * Whether a video goes out as layers: true when the server takes simulcast; undefined when only
   * layers can ask (the answer then tells, and leaves the first layer when it declines); false when
   * the server does not take simulcast, or nothing told (one layer, the safe choice).
   */
  get layers(): boolean | undefined {
    return this.capable ?? (this.onlyLayersAsk ? undefined : false);
  }

  /** Whether the answer to a video m-line without rids can tell: not yet told, and this browser lets it ask. */
  get askable(): boolean {
    return this.capable === undefined && !this.onlyLayersAsk;
  }

  /**
   * Learns from an offer and its answer, `sendingVideo` being the mids of the m-lines that send
   * video. Any video m-line answered with the RID extension says yes; a sending one offered with it
   * and answered without it says no; one offered without it says nothing (this browser offers it
   * only with rids). Returns the answer's video m-lines.
   */
  learn(offer: string, answer: string, sendingVideo: readonly (string | null)[]): ReadonlyMap<string, VideoSection> {
    const offered = readVideoSdp(offer);
    const answered = readVideoSdp(answer);
    if ([...answered.values()].some((m) => m.rid)) this.capable = true;
    for (const mid of sendingVideo) {
      const section = mid === null ? undefined : offered.get(mid);
      if (!section || mid === null) continue;
      if (!section.rid) this.onlyLayersAsk = true;
      else if (answered.has(mid)) this.capable ??= false;
    }
    return answered;
  }
}
