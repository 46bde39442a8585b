import { GenericNack, RtcpTransportLayerFeedback } from 'werift';
import { seqAfter } from './rewriter.ts';

/** A gap this large is a restart of the publisher's numbering, not a loss. */
const RESET_GAP = 1000;
const MAX_PENDING = 500;
/** The first ask waits this long: a packet merely reordered arrives meanwhile. */
const REORDER_MS = 5;

interface Missing {
  readonly since: number;
  askedAt: number;
  asks: number;
}

/**
 * Asks a publisher again for packets lost on its uplink (generic NACK, RFC 4585), once per round trip
 * while the packet can still be used, rather than in one burst before any answer could come.
 */
export class NackRequester {
  private readonly maxAgeMs: number;
  private readonly maxRetries: number;
  private newest: number | undefined;
  private readonly missing = new Map<number, Missing>();
  private givenUp = 0;

  constructor(options: { readonly maxAgeMs: number; readonly maxRetries: number }) {
    this.maxAgeMs = options.maxAgeMs;
    this.maxRetries = options.maxRetries;
  }

  /** Every packet as it arrives; true when it is one the server had asked for. */
  onPacket(seq: number, nowMs: number): boolean {
    const newest = this.newest;
    if (newest === undefined) {
      this.newest = seq;
      return false;
    }
    if (seqAfter(seq, newest)) {
      const gap = (seq - newest) & 0xffff;
      if (gap > RESET_GAP) {
        this.missing.clear();
      } else {
        for (let s = (newest + 1) & 0xffff; s !== seq; s = (s + 1) & 0xffff) {
          this.missing.set(s, { since: nowMs, askedAt: Number.NEGATIVE_INFINITY, asks: 0 });
        }
        while (this.missing.size > MAX_PENDING) this.missing.delete(this.missing.keys().next().value!);
      }
      this.newest = seq;
      return false;
    }
    const entry = this.missing.get(seq);
    if (!entry) return false;
    this.missing.delete(seq);
    return entry.asks > 0;
  }

  /** Sequence numbers to ask for now. */
  due(nowMs: number, rttMs: number): number[] {
    const out: number[] = [];
    const spacing = Math.max(rttMs, 10);
    for (const [seq, m] of this.missing) {
      if (nowMs - m.since > this.maxAgeMs || m.asks >= this.maxRetries) {
        this.missing.delete(seq);
        this.givenUp += 1;
        continue;
      }
      if (nowMs - m.since < REORDER_MS || nowMs - m.askedAt < spacing) continue;
      m.askedAt = nowMs;
      m.asks += 1;
      out.push(seq);
    }
    return out;
  }

  /** Packets given up since the last call. */
  takeGivenUp(): number {
    const n = this.givenUp;
    this.givenUp = 0;
    return n;
  }
}

/** A generic NACK for these sequence numbers. */
export function nackFeedback(senderSsrc: number, mediaSourceSsrc: number, lost: readonly number[]): RtcpTransportLayerFeedback {
  return new RtcpTransportLayerFeedback({ feedback: new GenericNack({ senderSsrc, mediaSourceSsrc, lost: [...lost] }) });
}
