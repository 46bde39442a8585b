import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RTCPeerConnection } from 'werift';
import { leaveMediaToSession } from './receive-path.ts';

/** werift's router as the connection holds it (not in its typings). */
function routerOf(pc: RTCPeerConnection): { routeRtp: unknown; routeRtcp: unknown } {
  return (pc as unknown as { router: { routeRtp: unknown; routeRtcp: unknown } }).router;
}

describe('werift\'s router off the server\'s connections', () => {
  it('replaces the router methods werift\'s transport calls for each RTP and RTCP packet', async () => {
    const pc = new RTCPeerConnection({});
    const router = routerOf(pc);
    // the methods werift 0.23.0 routes through: an upgrade that renames them fails here
    const rtp = router.routeRtp;
    const rtcp = router.routeRtcp;
    assert.equal(typeof rtp, 'function');
    assert.equal(typeof rtcp, 'function');
    leaveMediaToSession(pc);
    assert.notEqual(router.routeRtp, rtp);
    assert.notEqual(router.routeRtcp, rtcp);
    await pc.close();
  });
});
