/** How well media flows, from a peer connection's statistics (the `connectionQuality` event). */
import type { StatsReportLike } from './dom.ts';

/** How well media flows now, from the peer connection's statistics. */
export interface QualityReport {
  readonly quality: 'excellent' | 'good' | 'poor' | 'lost';
  /** Round-trip time to the media server, ms (undefined before the first measurement). */
  readonly rttMs: number | undefined;
  /** Share of packets lost among those expected from the server since the last report, 0 to 1. */
  readonly packetLoss: number;
}

/** Reads successive statistics reports of one peer connection: the loss is counted since the previous one. */
export class QualityMeter {
  private last = { received: 0, lost: 0 };

  read(report: StatsReportLike, connectionState: string): QualityReport {
    let rttMs: number | undefined;
    let received = 0;
    let lost = 0;
    report.forEach((stat) => {
      if (stat['type'] === 'candidate-pair' && stat['nominated'] === true && typeof stat['currentRoundTripTime'] === 'number') {
        rttMs = stat['currentRoundTripTime'] * 1000;
      }
      if (stat['type'] === 'inbound-rtp') {
        received += typeof stat['packetsReceived'] === 'number' ? stat['packetsReceived'] : 0;
        lost += typeof stat['packetsLost'] === 'number' ? stat['packetsLost'] : 0;
      }
    });
    const newReceived = Math.max(0, received - this.last.received);
    const newLost = Math.max(0, lost - this.last.lost);
    this.last = { received, lost };
    const packetLoss = newReceived + newLost === 0 ? 0 : newLost / (newReceived + newLost);
    return { quality: qualityOf(connectionState, rttMs, packetLoss), rttMs, packetLoss };
  }
}

function qualityOf(state: string, rttMs: number | undefined, loss: number): QualityReport['quality'] {
  if (state !== 'connected') return 'lost';
  if (loss > 0.1 || (rttMs ?? 0) > 400) return 'poor';
  if (loss > 0.02 || (rttMs ?? 0) > 150) return 'good';
  return 'excellent';
}
