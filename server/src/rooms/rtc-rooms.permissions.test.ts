import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RtcRoom, TokenResponse } from '@rtc/protocol';
import { MediaError, type MediaSession } from '../../../sdk/app/src/index.ts';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';
import { startInProcessMedia, type InProcessMedia } from '../../../test/helpers/inproc-media.ts';
import { join, nextEvent, sleep } from '../../../test/e2e/media-helpers.ts';

// A permission change through the room service API holds for the rest of the life of every grant the
// participant used (docs/reference/room-api.md, "Changing permissions"): a reconnection with one of
// them, on its media node or another, gets the changed permissions, read from the store.
describe('permission changes outlast a reconnection with the same grant', () => {
  let server: InProcessPlatform;
  let customer: Customer;
  let nodeA: InProcessMedia;
  let nodeB: InProcessMedia;
  const sessions: MediaSession[] = [];

  before(async () => {
    server = await startInProcess();
    customer = await createCustomer(server);
    nodeA = await startInProcessMedia(server, customer);
    nodeB = await startInProcessMedia(server, customer);
  });
  after(async () => {
    for (const s of sessions) await s.close();
    await nodeA?.close();
    await nodeB?.close();
    await server?.close();
  });

  const issue = async (room: string, user: string): Promise<TokenResponse> => {
    const res = await server.request(`${server.api}/v1/rtc/tokens`, {
      headers: { authorization: customer.auth }, body: { room_id: room, user_id: user, role: 'speaker', publish_streams: [1] },
    });
    assert.equal(res.status, 200, res.text);
    return res.json<TokenResponse>();
  };
  const enter = async (node: InProcessMedia, token: TokenResponse, getToken?: () => Promise<TokenResponse>): Promise<MediaSession> => {
    const port = Number(new URL(node.role.url).port);
    const at = (t: TokenResponse): TokenResponse => ({ ...t, media: { ...t.media, sfu_host: '127.0.0.1', sfu_port: port } });
    const session = await join(at(token), getToken ? { getToken: async () => at(await getToken()) } : {});
    sessions.push(session);
    return session;
  };
  const refusesPublishing = async (session: MediaSession): Promise<void> => {
    await assert.rejects(session.publish(1, 'audio'), (err: unknown) => err instanceof MediaError && err.code === 'stream_not_allowed');
  };
  /** The participant as the room service API lists it, once its media node recorded it. */
  const listed = async (room: string, participantId: string) => {
    for (let i = 0; ; i++) {
      const res = await server.request(`${server.api}/v1/rtc/rooms/${room}`, { method: 'GET', headers: { authorization: customer.auth } });
      const found = res.status === 200 ? res.json<RtcRoom>().participants.find((p) => p.participant_id === participantId) : undefined;
      if (found) return found;
      assert.ok(i < 250, 'listed within 5 s');
      await sleep(20);
    }
  };

  it('refuses publishing after a reconnection with the grant used when publish_streams was taken away, and with its renewal', async () => {
    const first = await issue('perm-stick', 'mallory');
    const renewal = await issue('perm-stick', 'mallory');
    const mallory = await enter(nodeA, first, async () => renewal);
    await listed('perm-stick', mallory.participantId);
    const told = nextEvent(mallory, 'permissions');
    const res = await server.request(`${server.api}/v1/rtc/rooms/perm-stick/participants/${mallory.participantId}`, {
      method: 'PATCH', headers: { authorization: customer.auth }, body: { publish_streams: [] },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual((await told).publishStreams, []);
    // the renewal brings a grant that lists stream 1: the change holds over it too
    await mallory.renew();
    await refusesPublishing(mallory);
    // the media node stores the change for the renewal's grant before its presence row lists that grant
    for (let i = 0; ; i++) {
      const rows = await server.deps.store.listLiveParticipants(customer.projectId, 'perm-stick', 0);
      if (rows.find((p) => p.participantId === mallory.participantId)?.grants.length === 2) break;
      assert.ok(i < 250, 'the renewal recorded within 5 s');
      await sleep(20);
    }
    await mallory.close();

    // the first grant again, on another media node: the store tells it
    const again = await enter(nodeB, first);
    await refusesPublishing(again);
    assert.deepEqual((await listed('perm-stick', again.participantId)).publish_streams, []);
    await again.close();
    // the renewal's grant, on the first node
    const renewed = await enter(nodeA, renewal);
    await refusesPublishing(renewed);
    await renewed.close();

    // a grant the customer's server issues afterwards is its new decision
    const fresh = await enter(nodeB, await issue('perm-stick', 'mallory'));
    const stream = await fresh.publish(1, 'audio');
    assert.equal(stream.active, true);
  });

  it('keeps the newest change when a session renews with an older grant that holds an earlier one', async () => {
    const room = 'perm-older';
    const older = await issue(room, 'trudy');
    const change = async (session: MediaSession, publishStreams: number[]): Promise<void> => {
      await listed(room, session.participantId);
      const told = nextEvent(session, 'permissions');
      const res = await server.request(`${server.api}/v1/rtc/rooms/${room}/participants/${session.participantId}`, {
        method: 'PATCH', headers: { authorization: customer.auth }, body: { publish_streams: publishStreams },
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual((await told).publishStreams, publishStreams);
    };
    // a first change, kept on the older grant: stream 1 stays allowed
    const first = await enter(nodeA, older);
    await change(first, [1]);
    await first.close();
    server.clock.advance(1000);
    // a later session, under a newer grant, has stream 1 taken away, then renews with the older grant
    const later = await enter(nodeA, await issue(room, 'trudy'), async () => older);
    await change(later, []);
    await later.renew();
    await refusesPublishing(later);
    await later.close();
    // and the older grant holds the newest change from now on, on any node
    const again = await enter(nodeB, older);
    await refusesPublishing(again);
    await again.close();
  });
});
