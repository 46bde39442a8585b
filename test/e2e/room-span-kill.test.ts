import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { FailoverCall } from '../helpers/media-failover.ts';
import { issueFollowingRetryAfter } from './cluster-helpers.ts';
import { startSpanCluster, type SpanCluster } from './span-cluster.ts';

/** A killed node leaves the directory 6 s after its last announcement, and the streams it originated 6 s after theirs. */
const MOVE_TIMEOUT_MS = 30_000;

// docs/operations/scale-out.md, "Rooms across media nodes", and docs/protocol/relay.md, "Breaks": a
// room of four spread over two of three media nodes (two sessions a node), each participant
// publishing audio and hearing the three others. The node of two of them is killed: they move to the
// third node, the two others hear them again from there without ever reconnecting, and they hear
// the two others over a relay again.
describe('a room across media nodes when one of them is killed (a cluster on PostgreSQL and Redis)', () => {
  let cluster: SpanCluster | undefined;
  let call: FailoverCall | undefined;

  before(async () => {
    cluster = await startSpanCluster({ mediaNodes: 3, maxSessions: 2 });
  });

  after(async () => {
    await call?.close();
    await cluster?.stop();
  });

  it('moves the killed node\'s participants, and the others hear them again without reconnecting', { timeout: 120_000 }, async () => {
    const issue = (room: string, user: string): Promise<TokenResponse> => issueFollowingRetryAfter(cluster!.api, cluster!.customer, {
      room_id: room, user_id: user, role: 'speaker', publish_streams: [1, 2, 3, 4], subscribe_room: true,
    });
    call = await FailoverCall.start({ rooms: ['hall'], perRoom: 4, issue });
    const onNode = (node: string) => call!.clients.filter((c) => c.session.mediaNode === node);
    const nodes = [...call.nodes()];
    assert.equal(nodes.length, 2, `placement spreads four over two nodes of two: ${nodes.join(', ')}`);
    // each hears the three others, two of them over a relay
    await call.flowingAfter(performance.now(), '', 15_000);

    const [killedNode, survivingNode] = nodes as [string, string];
    const hostOf = (s: { readonly urls: Readonly<Record<string, string>> }): string => new URL(s.urls['media']!).host;
    const killed = cluster!.media.find((s) => hostOf(s) === killedNode)!;
    const moving = onNode(killedNode);
    const staying = onNode(survivingNode);
    const killedAt = performance.now();
    killed.process.kill('SIGKILL');
    await call.flowingAfter(killedAt, killedNode, MOVE_TIMEOUT_MS);

    const third = cluster!.media.find((s) => ![killedNode, survivingNode].includes(hostOf(s)))!;
    for (const client of moving) {
      assert.equal(client.session.mediaNode, hostOf(third), `${client.user} moved to the node with room`);
      assert.ok(client.events.some((e) => e.type === 'reconnected' && e.moved), `${client.user} moved`);
    }
    for (const client of staying) {
      assert.equal(client.session.mediaNode, survivingNode);
      assert.deepEqual(client.events, [], `${client.user} on the surviving node never reconnected`);
      assert.deepEqual(client.losses, [], `${client.user} never lost its connection`);
    }
  });
});
