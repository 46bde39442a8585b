/**
 * When an offer may go out: the server does not trickle, it has the candidates of the offer
 * (docs/protocol/media.md, 10.1), so the peer connection waits for the candidates that can carry
 * media, and no longer.
 */
import type { IceCandidateEventLike, IceTransportPolicy, PeerConnectionLike } from './dom.ts';

export interface GatheringSettings {
  readonly iceTransportPolicy: IceTransportPolicy;
  /** How long to wait for ICE gathering before offering what is gathered (ms). */
  readonly gatheringTimeoutMs: number;
  /** Quiet time after the last usable candidate before offering without waiting for gathering to complete (ms). */
  readonly candidateSettleMs: number;
}

/** The usable candidates of a peer connection's current ICE gathering, and the waits for them. */
export class CandidateWait {
  private readonly settings: () => GatheringSettings;
  /** Candidates of the current ICE gathering that can carry media, and when the last one came. */
  private usable = { count: 0, at: 0 };
  private readonly waiters = new Set<() => void>();

  constructor(settings: () => GatheringSettings) {
    this.settings = settings;
  }

  /** An ICE restart gathers afresh: only its own candidates count. */
  restart(): void {
    this.usable = { count: 0, at: 0 };
  }

  /** Every `icecandidate` event of the peer connection. */
  onCandidate(event: IceCandidateEventLike): void {
    const line = event.candidate?.candidate;
    if (!line) return;
    const candidate = parseCandidate(line);
    if (!candidate || candidate.protocol !== 'udp' || (this.settings().iceTransportPolicy === 'relay' && candidate.type !== 'relay')) return;
    this.usable = { count: this.usable.count + 1, at: Date.now() };
    for (const check of [...this.waiters]) check();
  }

  /**
   * Resolves when the offer may go out: when gathering is complete, or once a usable candidate came
   * and no other one for `candidateSettleMs`, or after `gatheringTimeoutMs` in any case.
   *
   * Usable is a UDP candidate (the server speaks UDP only, so TCP candidates, which Chromium gathers
   * about 100 ms after the UDP ones, never are), and with the `relay` policy only a relay candidate.
   * With the `all` policy the host candidates suffice: every candidate gathered later (server
   * reflexive, or TURN relay when the network blocks direct UDP) still sends connectivity checks,
   * from which the server learns it as a peer reflexive candidate (RFC 8445, 7.3.1.3).
   */
  gathered(pc: PeerConnectionLike): Promise<void> {
    const { candidateSettleMs, gatheringTimeoutMs } = this.settings();
    const ready = (): boolean => pc.iceGatheringState === 'complete'
      || (this.usable.count > 0 && Date.now() - this.usable.at >= candidateSettleMs);
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => {
      let settle: ReturnType<typeof setTimeout> | undefined;
      const check = (): void => {
        clearTimeout(settle);
        if (!ready()) {
          if (this.usable.count > 0) settle = setTimeout(check, Math.max(0, this.usable.at + candidateSettleMs - Date.now()));
          return;
        }
        done();
      };
      const done = (): void => {
        clearTimeout(settle);
        clearTimeout(limit);
        pc.removeEventListener('icegatheringstatechange', check);
        this.waiters.delete(check);
        resolve();
      };
      const limit = setTimeout(done, gatheringTimeoutMs);
      pc.addEventListener('icegatheringstatechange', check);
      this.waiters.add(check);
      check();
    });
  }
}

/** The transport protocol and type of an `a=candidate` line (RFC 8839, 5.1). */
export function parseCandidate(line: string): { readonly protocol: string; readonly type: string } | undefined {
  const fields = line.replace(/^a=/, '').replace(/^candidate:/, '').trim().split(/\s+/);
  const typ = fields.indexOf('typ');
  const protocol = fields[2];
  const type = typ > 0 ? fields[typ + 1] : undefined;
  return protocol !== undefined && type !== undefined ? { protocol: protocol.toLowerCase(), type } : undefined;
}
