/**
 * Test-room invitations attacked as a guest and as a customer (docs/console.md, "Share links"): the
 * guest's identity and streams are the platform's, one use holds across restarts and api processes
 * (SQLite file, PostgreSQL), and an archive voids the invitations made before it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { bearer, createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { freshAddress, type HttpResult } from '../../../test/helpers/http.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';
import { startInProcessMedia, type InProcessMedia } from '../../../test/helpers/inproc-media.ts';
import { postgresDatabases, type PostgresDatabases } from '../../../test/helpers/postgres-databases.ts';
import { nextEvent } from '../../../test/e2e/media-helpers.ts';

const GUEST_USER = /^guest_[A-Za-z0-9_-]{22}$/;

const invite = (server: InProcessPlatform, customer: Customer, room = 'test-room'): Promise<HttpResult> =>
  server.request(`${server.api}/v1/projects/${customer.projectId}/invitations`, { headers: bearer(customer.accessToken), body: { room_id: room } });
const invitationOf = async (server: InProcessPlatform, customer: Customer, room?: string): Promise<string> => {
  const res = await invite(server, customer, room);
  assert.equal(res.status, 201, res.text);
  return res.json<{ invitation: string }>().invitation;
};
const redeem = (server: InProcessPlatform, body: unknown): Promise<HttpResult> =>
  server.request(`${server.api}/v1/invitations/redeem`, { body, localAddress: freshAddress() });
const errorOf = (res: HttpResult): string => res.json<{ error: string }>().error;

describe('share-link guests: an identity and streams of the platform\'s choosing', () => {
  let server: InProcessPlatform;
  let media: InProcessMedia;
  let customer: Customer;
  before(async () => {
    server = await startInProcess();
    customer = await createCustomer(server);
    media = await startInProcessMedia(server, customer);
  });
  after(async () => {
    await media?.close();
    await server?.close();
  });
  const temporaryToken = (body: Record<string, unknown>): Promise<HttpResult> =>
    server.request(`${server.api}/v1/projects/${customer.projectId}/temporary-token`, {
      headers: bearer(customer.accessToken), body: { room_id: 'test-room', role: 'host', subscribe_room: true, ...body },
    });

  it('gives the guest a guest_ user id and two stream ids of its own, whatever user id and streams it asks for', async () => {
    const asked = await redeem(server, { invitation: await invitationOf(server, customer), user_id: 'console-host', publish_streams: [1, 2] });
    assert.equal(asked.status, 200, asked.text);
    const token = asked.json<TokenResponse>();
    assert.match(token.user_id, GUEST_USER);
    assert.equal(token.role, 'speaker');
    assert.equal(token.publish_streams.length, 2);
    assert.ok(!token.publish_streams.includes(1) && !token.publish_streams.includes(2), `${token.publish_streams}`);

    // the request needs no more than the invitation, and two guests are never one another
    const bare = await redeem(server, { invitation: await invitationOf(server, customer) });
    assert.equal(bare.status, 200, bare.text);
    assert.match(bare.json<TokenResponse>().user_id, GUEST_USER);
    assert.notEqual(bare.json<TokenResponse>().user_id, token.user_id);
  });

  it('keeps an invitation usable when its token could not be issued, and still only once', async () => {
    const invitation = await invitationOf(server, customer);
    // the signing key fails once (issuer_unavailable), as a key store that cannot be read would
    const keys = server.deps.keys;
    const signing = Object.getOwnPropertyDescriptor(keys, 'signing')!;
    Object.defineProperty(keys, 'signing', {
      configurable: true,
      get: () => {
        Object.defineProperty(keys, 'signing', signing);
        throw new Error('the signing key is unavailable');
      },
    });
    const failed = await redeem(server, { invitation });
    assert.equal(failed.status, 502, failed.text);
    assert.equal(errorOf(failed), 'issuer_unavailable');
    // the retry it is told to make gets the token; the link is used up then
    const retried = await redeem(server, { invitation });
    assert.equal(retried.status, 200, retried.text);
    assert.match(retried.json<TokenResponse>().user_id, GUEST_USER);
    const again = await redeem(server, { invitation });
    assert.equal(again.status, 401, again.text);
    assert.equal(errorOf(again), 'unauthenticated');
  });

  it('refuses a guest_ user id on every other way to a token: token API, token host, console temporary token', async () => {
    const api = await server.request(`${server.api}/v1/rtc/tokens`, {
      headers: { authorization: customer.auth }, body: { room_id: 'test-room', user_id: 'guest_abc', role: 'speaker' },
    });
    const host = await server.request(`${server.token}/v1/tokens`, {
      headers: { authorization: customer.auth },
      body: { app_id: customer.appId, user_id: 'guest_abc', room_id: 'test-room', role: 'speaker' }, localAddress: freshAddress(),
    });
    const temporary = await temporaryToken({ user_id: 'guest_abc' });
    for (const res of [api, host, temporary]) {
      assert.equal(res.status, 400, res.text);
      assert.equal(errorOf(res), 'invalid_request');
      assert.match(res.json<{ message: string }>().message, /user_id must not start with guest_/);
    }
    // only the exact prefix is reserved
    assert.equal((await temporaryToken({ user_id: 'guest-abc' })).status, 200);
  });

  it('lets a guest who asks for the host\'s user id and streams join beside the host, never in its place', async () => {
    const hostToken = await temporaryToken({ user_id: 'console-host', publish_streams: [1, 2], ttl_seconds: 600 });
    assert.equal(hostToken.status, 200, hostToken.text);
    const host = await media.join(hostToken.json<TokenResponse>());
    const closed: unknown[] = [];
    host.on('disconnected', (info) => closed.push(info));

    const res = await redeem(server, { invitation: await invitationOf(server, customer), user_id: 'console-host', publish_streams: [1, 2] });
    assert.equal(res.status, 200, res.text);
    const guestToken = res.json<TokenResponse>();
    const joined = nextEvent(host, 'participantJoined');
    const guest = await media.join(guestToken);
    assert.match((await joined).userId, GUEST_USER);

    // the host publishes its streams, the guest its own: no stream id is taken from the other
    const added = nextEvent(guest, 'streamAdded', 5000, (s) => s.streamId === 1);
    await host.publish(1, 'video');
    await added;
    const guestAdded = nextEvent(host, 'streamAdded', 5000, (s) => s.streamId === guestToken.publish_streams[0]);
    await guest.publish(guestToken.publish_streams[0]!, 'video');
    await guestAdded;
    assert.deepEqual(closed, [], 'the host was not replaced');
    assert.deepEqual(host.participants().map((p) => p.userId), [guestToken.user_id]);
  });
});

describe('one use of an invitation survives an api restart on the same SQLite file', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rtc-invitations-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('refuses the second redemption after a restart', async () => {
    const first = await startInProcess({ dataDir });
    let invitation: string;
    try {
      const customer = await createCustomer(first);
      invitation = await invitationOf(first, customer);
      assert.equal((await redeem(first, { invitation, user_id: 'a-guest' })).status, 200);
    } finally {
      await first.close();
    }
    const second = await startInProcess({ dataDir });
    try {
      const again = await redeem(second, { invitation, user_id: 'a-guest' });
      assert.equal(again.status, 401, again.text);
      assert.equal(errorOf(again), 'unauthenticated');
    } finally {
      await second.close();
    }
  });
});

describe('one use of an invitation holds across api processes on one PostgreSQL without Redis', () => {
  let postgres: PostgresDatabases;
  let nodes: InProcessPlatform[] = [];
  let customer: Customer;
  before(async () => {
    postgres = await postgresDatabases();
    const url = await postgres.createDatabase();
    const first = await startInProcess({ env: { DATABASE_URL: url } });
    nodes = [first, await startInProcess({ env: { DATABASE_URL: url } })];
    customer = await createCustomer(first);
  });
  after(async () => {
    for (const node of nodes) await node.close();
    await postgres?.stop();
  });

  it('redeems on one process, then refuses on the other', async () => {
    const [a, b] = nodes as [InProcessPlatform, InProcessPlatform];
    const invitation = await invitationOf(a, customer);
    assert.equal((await redeem(a, { invitation, user_id: 'a-guest' })).status, 200);
    const again = await redeem(b, { invitation, user_id: 'a-guest' });
    assert.equal(again.status, 401, again.text);
    assert.equal((await redeem(a, { invitation, user_id: 'a-guest' })).status, 401);
  });

  it('lets exactly one of concurrent redemptions on both processes win', async () => {
    const invitation = await invitationOf(nodes[0]!, customer);
    const results = await Promise.all([...nodes, ...nodes, ...nodes].map((node) => redeem(node, { invitation, user_id: 'a-guest' })));
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 401, 401, 401, 401, 401], results.map((r) => r.text).join('\n'));
  });
});

describe('an archive voids the invitations made before it, also after an unarchive', () => {
  let server: InProcessPlatform;
  let customer: Customer;
  before(async () => {
    server = await startInProcess();
    customer = await createCustomer(server);
  });
  after(async () => {
    await server?.close();
  });
  const setArchived = async (archived: boolean): Promise<void> => {
    const res = await server.request(`${server.api}/v1/projects/${customer.projectId}/${archived ? 'archive' : 'unarchive'}`, {
      method: 'POST', headers: bearer(customer.accessToken),
    });
    assert.equal(res.status, 200, res.text);
  };

  it('refuses an invitation made before the archive, and redeems one made after the unarchive', async () => {
    const before = await invitationOf(server, customer);
    server.clock.advance(5_000);
    await setArchived(true);
    server.clock.advance(5_000);
    await setArchived(false);
    const res = await redeem(server, { invitation: before, user_id: 'a-guest' });
    assert.equal(res.status, 401, res.text);
    assert.equal(errorOf(res), 'unauthenticated');

    server.clock.advance(1_000);
    const made = await invitationOf(server, customer);
    assert.equal((await redeem(server, { invitation: made, user_id: 'a-guest' })).status, 200);
  });
});
