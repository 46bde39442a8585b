import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_ROOMS_CREATED_AHEAD, ROOM_CREATIONS_PER_MINUTE, type RoomList } from '@rtc/protocol';
import { nowSec } from '../core/deps.ts';
import type { RoomRecord } from './store.ts';
import { bearer, createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';
import { postgresDatabases, type PostgresDatabases } from '../../../test/helpers/postgres-databases.ts';

// Rooms created ahead are bounded per project and expire, and every listing reads one page from the
// store (docs/reference/room-api.md, "Limits" and "Listing rooms"), on each store.
for (const kind of ['sqlite', 'postgres'] as const) describe(`rooms created ahead and room listings (${kind})`, () => {
  let pg: PostgresDatabases | undefined;
  let server: InProcessPlatform;

  before(async () => {
    pg = kind === 'postgres' ? await postgresDatabases() : undefined;
    server = await startInProcess({ env: pg ? { DATABASE_URL: await pg.createDatabase() } : {} });
  });
  after(async () => {
    await server?.close();
    await pg?.stop();
  });

  const create = (customer: Customer, body: Record<string, unknown>) =>
    server.request(`${server.api}/v1/rtc/rooms`, { headers: { authorization: customer.auth }, body });
  const list = async (customer: Customer, query: string): Promise<RoomList> => {
    const res = await server.request(`${server.api}/v1/rtc/rooms${query}`, { method: 'GET', headers: { authorization: customer.auth } });
    assert.equal(res.status, 200, res.text);
    return res.json<RoomList>();
  };
  /** Stores `count` rooms created ahead for the customer's project, as `POST /v1/rtc/rooms` would, without its rate. */
  const storeAhead = async (customer: Customer, count: number, prefix: string, emptyTimeout: number): Promise<void> => {
    const now = nowSec(server.clock);
    const record = (i: number): RoomRecord => ({
      projectId: customer.projectId, roomId: `${prefix}-${String(i).padStart(4, '0')}`, metadata: '', maxParticipants: 0,
      emptyTimeout, createdAt: now, emptiedAt: now,
    });
    for (let i = 0; i < count; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) =>
        server.deps.store.createRoom(record(i + j), now, MAX_ROOMS_CREATED_AHEAD)));
    }
  };

  it('refuses a room created ahead beyond the project\'s cap with 409 conflict, until rooms start or expire', async () => {
    const customer = await createCustomer(server);
    await storeAhead(customer, MAX_ROOMS_CREATED_AHEAD - 1, 'ahead', 3600);
    const last = await create(customer, { room_id: 'last-one', empty_timeout: 60 });
    assert.equal(last.status, 201, last.text);
    const refused = await create(customer, { room_id: 'one-too-many' });
    assert.equal(refused.status, 409, refused.text);
    assert.deepEqual(refused.json(), {
      error: 'conflict',
      message: `the project holds ${MAX_ROOMS_CREATED_AHEAD} rooms created ahead that nobody joined yet; `
        + 'rooms count again once they start or their empty_timeout runs out',
    });
    // a room stored already is answered as ever; another project has its own cap
    assert.equal((await create(customer, { room_id: 'last-one' })).status, 200);
    assert.equal((await create(await createCustomer(server), { room_id: 'one-too-many' })).status, 201);

    // the room created with empty_timeout 60 expires a minute after its creation: gone, and its place is free
    server.clock.advance(60_000);
    assert.equal((await server.request(`${server.api}/v1/rtc/rooms/last-one`, { method: 'GET', headers: { authorization: customer.auth } })).status, 404);
    assert.equal((await create(customer, { room_id: 'one-too-many' })).status, 201);
    assert.equal((await create(customer, { room_id: 'two-too-many' })).status, 409);
    // an hour on, every room created ahead that nobody joined expired, and the store forgets them
    server.clock.advance(3600_000);
    assert.deepEqual((await list(customer, '?limit=100')).rooms, []);
    assert.ok(await server.deps.store.purgeRoomRecords(nowSec(server.clock)) >= MAX_ROOMS_CREATED_AHEAD);
    assert.equal((await create(customer, { room_id: 'two-too-many' })).status, 201);
  });

  if (kind === 'sqlite') {
    it(`limits POST /v1/rtc/rooms to ${ROOM_CREATIONS_PER_MINUTE} a minute per project: then 429 rate_limited with Retry-After`, async () => {
      const customer = await createCustomer(server);
      for (let i = 0; i < ROOM_CREATIONS_PER_MINUTE; i++) {
        const res = await create(customer, { room_id: 'rated' });
        assert.equal(res.status, i === 0 ? 201 : 200, res.text);
      }
      const limited = await create(customer, { room_id: 'rated-2' });
      assert.equal(limited.status, 429, limited.text);
      assert.equal(limited.json<{ error: string }>().error, 'rate_limited');
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      // another project is not slowed down; the project itself is again a minute later
      assert.equal((await create(await createCustomer(server), { room_id: 'rated-2' })).status, 201);
      server.clock.advance(60_000);
      assert.equal((await create(customer, { room_id: 'rated-2' })).status, 201);
    });
  }

  it('lists one page read from the store: rows read stay within the page, on the room API and the console alike', async () => {
    const customer = await createCustomer(server);
    await storeAhead(customer, 150, 'page', 3600);
    const now = nowSec(server.clock);
    await server.deps.store.heartbeatMediaNode('node-p:7880', now);
    for (const roomId of ['page-0001', 'page-0500', 'page-0501', 'page-0501']) {
      await server.deps.store.upsertLiveParticipant({
        participantId: `pa_${Math.random().toString(36).slice(2)}`, projectId: customer.projectId, roomId, userId: 'u', role: 'speaker',
        publishStreams: [], subscribeStreams: [], subscribeRoom: true, joinedAt: now, roomStartedAt: now, mediaNode: 'node-p:7880',
        grants: [], metadata: '', attributes: {}, streams: [],
      });
    }
    // every row any store read returns, counted
    const store = server.deps.store as unknown as Record<string, unknown>;
    const originals = new Map<string, unknown>();
    let rowsRead = 0;
    for (const [name, method] of Object.entries(store)) {
      if (typeof method !== 'function' || !/^(list|get)/.test(name)) continue;
      originals.set(name, method);
      store[name] = async (...args: unknown[]): Promise<unknown> => {
        const result: unknown = await (method as (...a: unknown[]) => Promise<unknown>).apply(store, args);
        rowsRead += Array.isArray(result) ? result.length : 1;
        return result;
      };
    }
    try {
      const first = await list(customer, '?limit=1');
      assert.deepEqual(first.rooms.map((r) => [r.room_id, r.participants.length]), [['page-0000', 0]]);
      assert.ok(rowsRead <= 6, `${rowsRead} rows read for a page of one room`);
      rowsRead = 0;
      const console = await server.request(`${server.api}/v1/projects/${customer.projectId}/rooms?limit=2`, {
        method: 'GET', headers: bearer(customer.accessToken),
      });
      assert.equal(console.status, 200, console.text);
      assert.deepEqual(console.json<RoomList>().rooms.map((r) => r.room_id), ['page-0000', 'page-0001']);
      assert.ok(rowsRead <= 12, `${rowsRead} rows read for a console page of two rooms`);
    } finally {
      for (const [name, method] of originals) store[name] = method;
    }
    // walking every page lists each room once, by room id, participants and rooms kept empty alike
    const seen: string[] = [];
    for (let cursor: string | null = ''; cursor !== null;) {
      const page: RoomList = await list(customer, `?limit=40${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...page.rooms.map((r) => r.room_id));
      cursor = page.next_cursor;
    }
    const expected = [...Array.from({ length: 150 }, (_, i) => `page-${String(i).padStart(4, '0')}`), 'page-0500', 'page-0501'];
    assert.deepEqual(seen, expected);
    const filtered = await list(customer, '?room_ids=page-0501,page-0003,nope&limit=1');
    assert.deepEqual(filtered.rooms.map((r) => [r.room_id, r.participants.length]), [['page-0003', 0]]);
    assert.notEqual(filtered.next_cursor, null);
  });
});
