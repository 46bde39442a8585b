/**
 * Probe clusters of a subscriber's downlink estimate (downlink-estimator.ts): what each train of
 * padding sent, and what of it arrived. Clock-free.
 */

/** Clusters kept; older ones are forgotten. */
const KEPT = 4;

interface Cluster {
  sentBytes: number;
  firstSentMs: number;
  lastSentMs: number;
  packets: number;
  recvBytes: number;
  firstRecvMs: number;
  lastRecvMs: number;
  recvPackets: number;
  lastRecvSize: number;
}

export class ProbeClusters {
  private readonly clusters = new Map<number, Cluster>();

  /** When the cluster's first packet left; undefined for one not (or no longer) known. */
  firstSentMs(probe: number): number | undefined {
    return this.clusters.get(probe)?.firstSentMs;
  }

  sent(probe: number, bytes: number, nowMs: number): void {
    let c = this.clusters.get(probe);
    if (!c) {
      c = { sentBytes: 0, firstSentMs: nowMs, lastSentMs: nowMs, packets: 0, recvBytes: 0, firstRecvMs: 0, lastRecvMs: 0, recvPackets: 0, lastRecvSize: 0 };
      this.clusters.set(probe, c);
      if (this.clusters.size > KEPT) this.clusters.delete(this.clusters.keys().next().value!);
    }
    c.sentBytes += bytes;
    c.lastSentMs = nowMs;
    c.packets += 1;
  }

  /** Whether enough of the cluster came back for its result to be read. */
  cameBack(probe: number): boolean {
    const c = this.clusters.get(probe);
    return c !== undefined && cameBack(c);
  }

  arrived(probe: number, size: number, arrivalMs: number): void {
    const c = this.clusters.get(probe);
    if (!c) return;
    if (c.recvPackets === 0) c.firstRecvMs = arrivalMs;
    c.recvPackets += 1;
    c.recvBytes += size;
    c.lastRecvMs = Math.max(c.lastRecvMs, arrivalMs);
    c.lastRecvSize = size;
  }

  /**
   * What a cluster showed: when the subscriber received it at the rate it was sent, the path carries
   * that rate. A train leaves at once (the bottleneck spreads it): on a path with none it also
   * arrives at once, which shows nothing beyond the rate the train stood for, `trainBps`, so the
   * result is capped there. Undefined until enough of it came back.
   */
  result(probe: number, trainBps: number): number | undefined {
    const c = this.clusters.get(probe);
    if (!c || !cameBack(c)) return undefined;
    const sendSpan = Math.max(c.lastSentMs - c.firstSentMs, 1);
    const recvSpan = Math.max(c.lastRecvMs - c.firstRecvMs, 1);
    const sendBps = ((c.sentBytes - c.lastRecvSize) * 8 * 1000) / sendSpan;
    const recvBps = ((c.recvBytes - c.lastRecvSize) * 8 * 1000) / recvSpan;
    return Math.min(sendBps, recvBps, trainBps);
  }
}

/** Enough of a cluster came back to read it: 80 % of its packets, and at least 5. */
function cameBack(c: Cluster): boolean {
  return c.recvPackets >= Math.max(5, c.packets * 0.8);
}
