import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_PARTICIPANT_ATTRIBUTES, MAX_PARTICIPANT_ATTRIBUTES_BYTES } from '@rtc/protocol';
import { nowSec } from '../core/deps.ts';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';
import { postgresDatabases, type PostgresDatabases } from '../../../test/helpers/postgres-databases.ts';

// Concurrent attribute changes of one participant on each store: the merge and its bounds are one
// atomic step (docs/reference/room-api.md, "Limits"), so no interleaving stores more than they allow.
for (const kind of ['sqlite', 'postgres'] as const) describe(`participant attributes under concurrent changes (${kind})`, () => {
  let pg: PostgresDatabases | undefined;
  let server: InProcessPlatform;
  let customer: Customer;

  before(async () => {
    pg = kind === 'postgres' ? await postgresDatabases() : undefined;
    server = await startInProcess({ env: pg ? { DATABASE_URL: await pg.createDatabase() } : {} });
    customer = await createCustomer(server);
  });
  after(async () => {
    await server?.close();
    await pg?.stop();
  });

  /** A participant of `roomId` recorded as its media node would, on a node seen now. */
  const joined = async (roomId: string, participantId: string): Promise<void> => {
    const now = nowSec(server.clock);
    await server.deps.store.heartbeatMediaNode('node-a:7880', now);
    await server.deps.store.upsertLiveParticipant({
      participantId, projectId: customer.projectId, roomId, userId: participantId, role: 'speaker', publishStreams: [1],
      subscribeStreams: [], subscribeRoom: true, joinedAt: now, roomStartedAt: now, mediaNode: 'node-a:7880',
      grants: [{ grantId: `g-${participantId}`, expiresAt: now + 600 }], metadata: '', attributes: {}, streams: [],
    });
  };
  const patch = (roomId: string, participantId: string, attributes: Record<string, string>) =>
    server.request(`${server.api}/v1/rtc/rooms/${roomId}/participants/${participantId}`, {
      method: 'PATCH', headers: { authorization: customer.auth }, body: { attributes },
    });
  const stored = async (participantId: string): Promise<Record<string, string>> => {
    const rows = await server.deps.store.listLiveParticipants(customer.projectId, undefined, 0);
    return rows.find((p) => p.participantId === participantId)!.attributes;
  };

  it('never stores more keys than allowed, however many changes run at once', async () => {
    await joined('attrs-keys', 'pa_keys');
    // 24 changes of two new keys each: 48 keys asked for, 32 allowed
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) =>
      patch('attrs-keys', 'pa_keys', { [`k${i}a`]: 'v', [`k${i}b`]: 'v' })));
    const attributes = await stored('pa_keys');
    assert.ok(Object.keys(attributes).length <= MAX_PARTICIPANT_ATTRIBUTES, `${Object.keys(attributes).length} keys stored`);
    const accepted = answers.filter((r) => r.status === 200).length;
    assert.equal(Object.keys(attributes).length, accepted * 2, 'every accepted change is stored, and only those');
    for (const r of answers.filter((a) => a.status !== 200)) {
      assert.equal(r.status, 400);
      assert.equal(r.json<{ error: string }>().error, 'invalid_request');
    }
  });

  it('never stores more bytes than allowed, however many changes run at once', async () => {
    await joined('attrs-bytes', 'pa_bytes');
    // 24 changes of one key of 1000 bytes each: about 24,000 bytes asked for, 8,192 allowed
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) =>
      patch('attrs-bytes', 'pa_bytes', { [`k${i}`]: 'x'.repeat(1000) })));
    const attributes = await stored('pa_bytes');
    const bytes = Object.entries(attributes).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
    assert.ok(bytes <= MAX_PARTICIPANT_ATTRIBUTES_BYTES, `${bytes} bytes stored`);
    assert.equal(Object.keys(attributes).length, answers.filter((r) => r.status === 200).length);
  });
});
