import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MEDIA_PATH, type TokenResponse } from '@rtc/protocol';
import type { MediaSession } from '../../sdk/app/src/index.ts';
import WebSocket from 'ws';
import { errorStatus, type Json, type JsonObject } from '../../server/src/openapi/document.ts';
import { upgradeRequiredSchema } from '../../server/src/media/node/operations.ts';
import { signalingEventSchema } from '../../server/src/signaling/operations.ts';
import { OPERATIONS } from '../../server/src/openapi/operations.ts';
import { REFERENCE_FILES } from '../../scripts/api-docs/reference.ts';
import { DEFAULT_BODY_LIMIT, errorSchema, type Host, type Operation } from '../../server/src/http/registry.ts';
import { createCustomer, newLogin, type Customer } from '../helpers/customer.ts';
import { request, type HttpResult } from '../helpers/http.ts';
import { ROOT } from '../helpers/root.ts';
import { serveInProcess, type ServedPlatform } from '../helpers/serve-inproc.ts';
import { issueSignalingToken } from '../helpers/signaling.ts';
import { join as joinMedia, sleep } from '../e2e/media-helpers.ts';
import { readEvents, type EventReader } from './event-reader.ts';
import { ROUTED_HOSTS } from './openapi-routes.ts';

/** What the contract needs to call each operation for real: accounts, ids, handles. */
interface Fixtures {
  readonly customer: Customer;
  readonly spareAppId: string;
  readonly revocationHandle: string;
  readonly spareRefreshToken: string;
  readonly spareAccessToken: string;
  /** Accounts of their own for signing out everywhere and for changing the password. */
  readonly everywhereAccessToken: string;
  readonly passwordAccount: { readonly accessToken: string; readonly password: string };
  /** A test-room invitation of the customer's project, redeemed by the redeem example. */
  readonly invitation: string;
  readonly quoteId: string;
  readonly requestId: string;
  readonly freeProjectId: string;
  /** Archived and unarchived by their examples: an archive cuts off the tokens of its project (the signaling fixtures'). */
  readonly archivedProjectId: string;
  /** An endpoint of the customer's project (deleted by the delete example, the last of its operations). */
  readonly webhookId: string;
  /** Signaling tokens of one room: joiner (not joined yet), leaver, alice and bob, reader (joined). */
  readonly signaling: Readonly<Record<'joiner' | 'leaver' | 'alice' | 'bob' | 'reader', string>>;
  /** Media sessions of the room service examples: participant ids to remove, one per host. */
  readonly removable: Readonly<Partial<Record<Host, string>>>;
  readonly liveParticipantId: string;
  readonly publisherId: string;
  readonly mediaSessions: readonly MediaSession[];
}

/** The room of the room service examples, and one room to end per host. */
const LIVE_ROOM = 'contract-live';
const endRoomOf = (host: Host): string => `contract-end-${host}`;

describe('OpenAPI document: every route, generated from the schemas the routes validate with', () => {
  let server: ServedPlatform;
  let f: Fixtures;
  const hostUrl = (host: Host): string => {
    const url = server.urls[host];
    assert.ok(url, `the test server runs the ${host} role`);
    return url;
  };

  before(async () => {
    server = await serveInProcess({ roles: ['api', 'token', 'signaling', 'media'] });
    const customer = await createCustomer(server);
    const bearer = { authorization: `Bearer ${customer.accessToken}` };
    const spare = await request(`${server.api}/v1/projects/${customer.projectId}/credentials`, { headers: bearer, body: { scopes: ['subscriber'] } });
    const token = await request(`${server.api}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body: { room_id: 'r', user_id: 'u', role: 'host' } });
    const login = () => request(`${server.api}/v1/auth/login`, { body: { email: customer.email, password: customer.password } })
      .then((r) => r.json<{ access_token: string; refresh_token: string }>());
    const [first, second] = [await login(), await login()];
    const quote = await request(`${server.api}/v1/billing/quotes`, { headers: bearer, body: { plan: 'business', usage: {} } });
    const project = (name: string) => request(`${server.api}/v1/projects`, { headers: bearer, body: { name } }).then((r) => r.json<{ id: string }>().id);
    const requestProject = await project('subscription fixture');
    const subscription = await request(`${server.api}/v1/billing/subscription-requests`, { headers: bearer, body: { project_id: requestProject, plan: 'starter' } });
    const signalingToken = async (user: string, join: boolean): Promise<string> => {
      const { token } = (await issueSignalingToken(server.token, customer, { room_id: 'contract-room', user_id: user })).signaling;
      if (join) {
        const joined = await request(`${hostUrl('signaling')}/v1/signaling/join`, { body: { token } });
        assert.equal(joined.status, 200, joined.text);
      }
      return token;
    };
    const mediaSessions: MediaSession[] = [];
    const participant = async (room: string, user: string): Promise<string> => {
      const issued = await request(`${server.api}/v1/rtc/tokens`, {
        headers: { authorization: customer.auth }, body: { room_id: room, user_id: user, role: 'speaker', publish_streams: [1], subscribe_room: true },
      });
      const session = await joinMedia(issued.json<TokenResponse>());
      mediaSessions.push(session);
      return session.participantId;
    };
    const liveParticipantId = await participant(LIVE_ROOM, 'holder');
    // publishes stream 1 for the examples of muteRtcStream and muteProjectStream (the holder's publishing is taken away by updateRtcParticipant's)
    const publisherId = await participant(LIVE_ROOM, 'publisher');
    await mediaSessions.at(-1)!.publish(1, 'audio', { source: 'microphone' });
    const removable = { api: await participant(LIVE_ROOM, 'removed-on-api'), token: await participant(LIVE_ROOM, 'removed-on-token') };
    for (const host of ['api', 'token'] as const) await participant(endRoomOf(host), 'ended');
    // the media role records each join in the store just after the join
    for (let listed = 0; listed < 6; await sleep(20)) {
      const res = await request(`${server.api}/v1/rtc/rooms`, { method: 'GET', headers: { authorization: customer.auth } });
      const rooms = res.json<{ rooms: { participants: { streams: unknown[] }[] }[] }>().rooms;
      listed = rooms.reduce((n, r) => n + r.participants.length, 0) + (rooms.some((r) => r.participants.some((p) => p.streams.length > 0)) ? 0 : -1);
    }
    const account = async (): Promise<{ accessToken: string; password: string }> => {
      const { email, password } = newLogin();
      const res = await request(`${server.api}/v1/auth/register`, { body: { email, password } });
      return { accessToken: res.json<{ access_token: string }>().access_token, password };
    };
    f = {
      everywhereAccessToken: (await account()).accessToken,
      passwordAccount: await account(),
      invitation: (await request(`${server.api}/v1/projects/${customer.projectId}/invitations`, { headers: bearer, body: { room_id: LIVE_ROOM } }))
        .json<{ invitation: string }>().invitation,
      removable,
      liveParticipantId,
      publisherId,
      mediaSessions,
      customer,
      spareAppId: spare.json<{ app_id: string }>().app_id,
      revocationHandle: token.json<{ media: { revocation_handle: string } }>().media.revocation_handle,
      spareRefreshToken: first.refresh_token,
      spareAccessToken: second.access_token,
      quoteId: quote.json<{ id: string }>().id,
      requestId: subscription.json<{ id: string }>().id,
      freeProjectId: await project('free for a subscription request'),
      archivedProjectId: await project('archived by the archive example'),
      webhookId: (await request(`${server.api}/v1/projects/${customer.projectId}/webhooks`,
        { headers: bearer, body: { url: 'https://203.0.113.10/hook' } })).json<{ id: string }>().id,
      signaling: {
        joiner: await signalingToken('joiner', false),
        leaver: await signalingToken('leaver', true),
        alice: await signalingToken('alice', true),
        bob: await signalingToken('bob', true),
        reader: await signalingToken('reader', true),
      },
    };
  });
  after(async () => {
    for (const session of f?.mediaSessions ?? []) await session.close();
    await server?.stop();
  });

  it('serves the document at GET /v1/openapi.json, byte for byte the committed docs/reference/openapi.json', async () => {
    const res = await request(`${server.api}/v1/openapi.json`);
    assert.equal(res.status, 200);
    assert.equal(res.text, readFileSync(join(ROOT, REFERENCE_FILES.openapi), 'utf8'));
    assert.equal(res.json<{ openapi: string }>().openapi, '3.1.0');
  });

  /** Headers, path and body overrides that let each documented example succeed on this server. */
  function call(op: Operation, body: unknown, extra: { query?: string; headers?: Record<string, string>; host?: Host } = {}): Promise<HttpResult> {
    const host = extra.host ?? op.hosts[0]!;
    const params: Record<string, string> = {
      id: op.id === 'archiveProject' || op.id === 'unarchiveProject' ? f.archivedProjectId : f.customer.projectId, app_id: f.spareAppId, quote_id: f.quoteId, request_id: f.requestId,
      room_id: op.id === 'endRtcRoom' || op.id === 'endProjectRoom' ? endRoomOf(host) : LIVE_ROOM,
      participant_id: (op.id === 'removeRtcParticipant' ? f.removable[host] : op.id === 'muteRtcStream' || op.id === 'muteProjectStream' ? f.publisherId : f.liveParticipantId) ?? '',
      webhook_id: f.webhookId,
      stream_id: '1',
    };
    const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
      assert.ok(params[name], `no fixture for path parameter ${name}`);
      return encodeURIComponent(params[name]);
    });
    const headers: Record<string, string> = { ...extra.headers };
    if (op.auth === 'basic') headers['authorization'] = f.customer.auth;
    const bearer = op.id === 'logout' ? f.spareAccessToken : op.id === 'logoutEverywhere' ? f.everywhereAccessToken
      : op.id === 'changePassword' ? f.passwordAccount.accessToken : f.customer.accessToken;
    if (op.auth === 'bearer') headers['authorization'] = `Bearer ${bearer}`;
    if (op.auth === 'signaling') headers['authorization'] = `Bearer ${f.signaling.reader}`;
    const url = `${hostUrl(host)}${path}${extra.query === undefined ? '' : `?${extra.query}`}`;
    return request(url, { method: op.method, headers, ...(body !== undefined && { body }) });
  }

  function exampleOf(op: Operation): unknown {
    if (op.example === undefined) return undefined;
    const example = op.example as Record<string, unknown>;
    switch (op.id) {
      case 'revokeRtcToken': return { revocation_handle: f.revocationHandle };
      case 'issueServiceToken': return { ...example, app_id: f.customer.appId };
      case 'refreshSession': return { refresh_token: f.spareRefreshToken };
      case 'changePassword': return { ...example, current_password: f.passwordAccount.password };
      case 'redeemInvitation': return { ...example, invitation: f.invitation };
      case 'createSubscriptionRequest': return { ...example, project_id: f.freeProjectId };
      case 'joinSignalingRoom': return { token: f.signaling.joiner };
      case 'leaveSignalingRoom': return { token: f.signaling.leaver };
      case 'sendSignalingMessage': return { ...example, token: f.signaling.alice, to: 'bob' };
      default: return example;
    }
  }

  /** The response has a documented status and the documented body for it. */
  function assertDocumented(op: Operation, res: HttpResult): void {
    const errors = op.errors.map(errorStatus);
    const spec = op.responses[res.status];
    const errorCodes = errors.filter(([status]) => status === res.status).map(([, code]) => code);
    assert.ok(spec || errorCodes.length > 0 || (op.cacheable && res.status === 304),
      `${op.id}: status ${res.status} is not documented (${res.text.slice(0, 200)})`);
    if (spec) {
      for (const name of Object.keys(spec.headers ?? {})) {
        assert.ok(res.headers[name.toLowerCase()] !== undefined, `${op.id} ${res.status}: header ${name}`);
      }
      if (spec.schema) {
        const parsed = spec.schema.safeParse(res.json());
        assert.ok(parsed.success, `${op.id} ${res.status}: the body breaks the documented schema: ${parsed.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
      } else {
        assert.equal(res.text, '', `${op.id} ${res.status}: no body`);
      }
    } else if (errorCodes.length > 0) {
      const body = errorSchema.parse(res.json());
      assert.ok(errorCodes.includes(body.error), `${op.id} ${res.status}: error ${body.error} is not documented`);
    }
    const cacheControl = op.cacheable && res.status < 400 ? 'public, max-age=300' : (spec?.headers?.['Cache-Control'] ?? 'no-store');
    assert.equal(res.headers['cache-control'], cacheControl, `${op.id}: cache-control`);
  }

  /** A stream's documented success: status, media type, no-store; then it is closed. */
  async function assertStreamOpens(op: Operation, host: Host): Promise<void> {
    const [status, spec] = Object.entries(op.responses).find(([, r]) => r.events)!;
    const reader = await readEvents(`${hostUrl(host)}${op.path}`, { authorization: `Bearer ${f.signaling.reader}` });
    try {
      assert.equal(String(reader.status), status, `${op.id}: status`);
      assert.equal(reader.headers['content-type']?.split(';')[0], spec.contentType, `${op.id}: content-type`);
      assert.equal(reader.headers['cache-control'], 'no-store', `${op.id}: cache-control`);
      await reader.next((e) => e.event === 'ready', 'ready');
    } finally {
      reader.close();
    }
  }

  /**
   * A signaling session without a stream stays PRESENCE_GRACE_SECONDS after its join: the fixture's
   * sessions join again before each signaling example, however long a loaded machine took to reach it.
   */
  const rejoin = async (): Promise<void> => {
    for (const token of [f.signaling.leaver, f.signaling.alice, f.signaling.bob, f.signaling.reader]) {
      const res = await request(`${hostUrl('signaling')}/v1/signaling/join`, { body: { token } });
      assert.equal(res.status, 200, res.text);
    }
  };

  // in the registry's order: each documented example must succeed with the documented response, on every host listed
  for (const op of OPERATIONS.filter((o) => o.hosts.some((h) => ROUTED_HOSTS.includes(h)))) {
    describe(`${op.method} ${op.path} (${op.id})`, () => {
      it('answers its documented example with a documented success and body', async () => {
        if (op.hosts.includes('signaling')) await rejoin();
        for (const host of op.hosts) {
          if (Object.values(op.responses).some((r) => r.events)) {
            await assertStreamOpens(op, host);
            continue;
          }
          const res = await call(op, exampleOf(op), { host });
          assertDocumented(op, res);
          assert.ok(res.status >= 200 && res.status < 300, `${op.id} on ${host}: ${res.status} ${res.text.slice(0, 300)}`);
        }
      });

      if (op.body) {
        it('validates the body with the documented strict schema: an unknown field is 400 naming it', async () => {
          const res = await call(op, { ...(exampleOf(op) as Record<string, Json>), x_undocumented: 1 });
          assert.equal(res.status, 400, `${op.id}: ${res.status} ${res.text}`);
          const err = res.json<{ error: string; message: string }>();
          assert.equal(err.error, 'invalid_request');
          assert.ok(err.message.includes('"x_undocumented"'), `${op.id}: "${err.message}" names the field`);
          assertDocumented(op, res);
        });

        it('takes bodies up to the documented limit and refuses larger ones with 413', async () => {
          const limit = op.bodyLimitBytes ?? DEFAULT_BODY_LIMIT;
          const json = JSON.stringify(exampleOf(op));
          const fits = await call(op, `${json}${' '.repeat(limit - Buffer.byteLength(json))}`, { headers: { 'content-type': 'application/json' } });
          assert.notEqual(fits.status, 413, `${op.id}: a body of exactly ${limit} bytes`);
          const over = await call(op, `${json}${' '.repeat(limit + 1 - Buffer.byteLength(json))}`, { headers: { 'content-type': 'application/json' } });
          assert.equal(over.status, 413, `${op.id}: a body of ${limit + 1} bytes`);
          assertDocumented(op, over);
        });
      }

      if (op.query) {
        it('validates the query with the documented parameters: an unknown one is 400 naming it', async () => {
          const res = await call(op, undefined, { query: 'x_undocumented=1' });
          assert.equal(res.status, 400);
          assert.equal(res.json<{ message: string }>().message, 'unknown query parameter "x_undocumented" is not allowed');
          assertDocumented(op, res);
        });
      }
    });
  }

  describe('GET /v1/signaling/events (openSignalingEvents): the documented events', () => {
    it('sends every documented event, each with the documented id and data, and nothing else', async () => {
      const signaling = hostUrl('signaling');
      const events = `${signaling}/v1/signaling/events`;
      const issue = (user: string, ttl?: number) => issueSignalingToken(server.token, f.customer, {
        room_id: 'contract-events', user_id: user, ...(ttl !== undefined && { ttl_seconds: ttl }),
      });
      const post = async (path: string, body: unknown): Promise<HttpResult> => {
        const res = await request(`${signaling}${path}`, { body });
        assert.equal(res.status, 200, `${path}: ${res.text}`);
        return res;
      };
      const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
      const watcher = await issue('watcher');
      const watcherToken = watcher.signaling.token;
      const carol = (await issue('carol')).signaling.token;
      const readers: EventReader[] = [];
      try {
        const joined = (await post('/v1/signaling/join', { token: watcherToken })).json<{ last_event_id: string }>();
        const live = await readEvents(events, bearer(watcherToken));
        readers.push(live);
        await live.next((e) => e.event === 'ready', 'ready');
        await post('/v1/signaling/join', { token: carol });
        await post('/v1/signaling/messages', { token: carol, data: { hello: 'room' } });
        await post('/v1/signaling/messages', { token: carol, data: [1, 'two'], to: 'watcher' });
        await post('/v1/signaling/leave', { token: carol });
        await live.next((e) => e.event === 'leave', 'carol leaving');

        // resuming after the join replays what followed it, then ready
        const resumed = await readEvents(events, { ...bearer(watcherToken), 'last-event-id': joined.last_event_id });
        readers.push(resumed);
        const ready = await resumed.next((e) => e.event === 'ready', 'ready after the replay');
        assert.equal((ready.data as JsonObject)['replayed'], 4);
        // an id that cannot be honoured starts with a snapshot that says so
        const reset = await readEvents(events, { ...bearer(watcherToken), 'last-event-id': 'unknown.1' });
        readers.push(reset);
        await reset.next((e) => e.event === 'snapshot' && (e.data as JsonObject)['reset'] === true, 'a reset snapshot');

        // revoking the grant ends every stream of the session with revoked
        const revoke = await request(`${server.token}/v1/rtc/tokens/revoke`, {
          headers: { authorization: f.customer.auth }, body: { revocation_handle: watcher.media.revocation_handle },
        });
        assert.equal(revoke.status, 200, revoke.text);
        await live.next((e) => e.event === 'revoked', 'revoked');
        await live.ended;

        // a token's expiry ends its streams with expired
        const brief = (await issue('brief', 2)).signaling.token;
        await post('/v1/signaling/join', { token: brief });
        const expiring = await readEvents(events, bearer(brief));
        readers.push(expiring);
        await expiring.next((e) => e.event === 'expired', 'expired');
        await expiring.ended;

        const seen = readers.flatMap((r) => r.events);
        for (const event of seen) {
          const parsed = signalingEventSchema.safeParse(event);
          assert.ok(parsed.success, `${JSON.stringify(event)} breaks the documented SignalingEvent: ${parsed.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
        }
        const documented = signalingEventSchema.options.map((option) => option.shape.event.value);
        assert.deepEqual([...new Set(seen.map((e) => e.event))].sort(), [...documented].sort());
      } finally {
        for (const reader of readers) reader.close();
      }
    });
  });

  describe(`GET ${MEDIA_PATH} (openMediaConnection): the media host`, () => {
    const op = OPERATIONS.find((o) => o.hosts.includes('media'))!;

    it('documents the one path the media server upgrades, and nothing else', () => {
      assert.deepEqual(OPERATIONS.filter((o) => o.hosts.includes('media')).map((o) => `${o.method} ${o.path}`), [`GET ${MEDIA_PATH}`]);
    });

    it('switches to a WebSocket (101) on the documented path, and answers a plain request with the documented 426', async () => {
      const media = hostUrl('media');
      const plain = await request(`${media.replace(/^ws/, 'http')}${op.path}`);
      assert.equal(plain.status, 426);
      const parsed = op.responses[426]!.schema!.safeParse(plain.json());
      assert.ok(parsed.success, plain.text);
      assert.equal(op.responses[426]!.schema, upgradeRequiredSchema);
      for (const name of Object.keys(op.responses[426]!.headers ?? {})) assert.ok(plain.headers[name.toLowerCase()], `426: header ${name}`);
      const other = await request(`${media.replace(/^ws/, 'http')}/v1/undocumented`);
      assert.equal(other.status, 404, 'no other path is served');

      const ws = new WebSocket(`${media}${op.path}`);
      try {
        const challenge = new Promise<string>((resolve, reject) => {
          ws.once('message', (data: Buffer, isBinary: boolean) => (isBinary ? reject(new Error('binary before the handshake')) : resolve(data.toString('utf8'))));
          ws.once('error', reject);
        });
        const upgrade = await new Promise<IncomingMessage>((resolve, reject) => {
          ws.once('upgrade', resolve);
          ws.once('error', reject);
        });
        assert.equal(upgrade.statusCode, 101);
        assert.ok(op.responses[101], 'the 101 is documented');
        for (const name of Object.keys(op.responses[101].headers ?? {})) assert.ok(upgrade.headers[name.toLowerCase()], `101: header ${name}`);
        assert.equal(JSON.parse(await challenge).type, 'challenge', 'the server speaks first, per docs/protocol/media.md');
      } finally {
        ws.terminate();
      }
    });
  });
});
