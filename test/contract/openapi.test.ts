import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MEDIA_PATH, type TokenResponse } from '@rtc/protocol';
import type { MediaSession } from '../../sdk/app/src/index.ts';
import pino from 'pino';
import WebSocket from 'ws';
import { z } from 'zod';
import { createMemoryBus } from '../../server/src/bus/memory.ts';
import { loadKeyRing } from '../../server/src/keys/file-keyring.ts';
import { fixedKeyRing } from '../../server/src/core/keyring.ts';
import { createMemoryLimiter } from '../../server/src/limiter/memory.ts';
import { createSqliteStore } from '../../server/src/store/sqlite.ts';
import { createPasswordHasher } from '../../server/src/core/password.ts';
import { createHttpApp, type HttpRole } from '../../server/src/main/http-app.ts';
import { CONSOLE_ROUTES } from '../../server/src/console-page/routes.ts';
import type { HttpContext } from '../../server/src/http/context.ts';
import type { Store } from '../../server/src/store/port.ts';
import { buildOpenApiDocument, errorStatus, type Json, type JsonObject } from '../../server/src/openapi/document.ts';
import { upgradeRequiredSchema } from '../../server/src/media/operations.ts';
import { signalingEventSchema } from '../../server/src/signaling/operations.ts';
import { OPERATIONS } from '../../server/src/openapi/operations.ts';
import { generateReference, REFERENCE_FILES } from '../../scripts/api-docs/reference.ts';
import { DEFAULT_BODY_LIMIT, errorSchema, type Host, type Operation } from '../../server/src/http/registry.ts';
import { createSignalingApp } from '../../server/src/signaling/app.ts';
import { createSignalingService } from '../../server/src/signaling/service.ts';
import { defaultSignalingSettings } from '../../server/src/signaling/settings.ts';
import { createCustomer, newLogin, type Customer } from '../helpers/customer.ts';
import { request, type HttpResult } from '../helpers/http.ts';
import { ROOT } from '../helpers/root.ts';
import { serveInProcess, type ServedPlatform } from '../helpers/serve-inproc.ts';
import { issueSignalingToken } from '../helpers/signaling.ts';
import { join as joinMedia, sleep } from '../e2e/media-helpers.ts';

const HTTP_ROLES: readonly HttpRole[] = ['api', 'token'];
/** The hosts whose routes are fastify apps, enumerated and compared with the document. */
const ROUTED_HOSTS: readonly Host[] = [...HTTP_ROLES, 'signaling'];
const COMPONENT = '#/components/schemas/';

/** `:id` → `{id}`: fastify's route form to the document's. */
const openApiPath = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** Whether a served route, as `METHOD /path` (fastify's trailing `*` a wildcard), answers a documented one. */
const answers = (served: string, documented: string): boolean =>
  (served.endsWith('*') ? documented.startsWith(served.slice(0, -1)) : served === documented);

/**
 * Every route each HTTP role and the signaling app register, as `METHOD /path` (HEAD routes are
 * fastify's automatic twins of GET; the signaling app has none).
 */
async function registeredRoutes(): Promise<Map<Host, Set<string>>> {
  const dir = mkdtempSync(join(tmpdir(), 'rtc-openapi-'));
  const nowMs = Date.now();
  const store = createSqliteStore(join(dir, 'rtc.sqlite'));
  const bus = createMemoryBus(() => undefined);
  const ctx: HttpContext<Store> = {
    deps: { store, limiter: createMemoryLimiter(), bus, clock: { nowMs: () => Date.now() }, keys: fixedKeyRing(loadKeyRing(dir, Math.floor(nowMs / 1000))),
      passwords: createPasswordHasher(), events: { record: async () => {} } },
    issuer: { issuer: 'rtc-platform', sfuHost: 'localhost', sfuPort: 7880 },
    limits: { appPerMinute: 1200, addressPerMinute: 2400 },
    trustProxy: undefined,
  };
  const routes = new Map<Host, Set<string>>();
  const recorder = (seen: Set<string>) => (route: { readonly method: string | string[]; readonly url: string }): void => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') seen.add(`${method} ${openApiPath(route.url)}`);
  };
  try {
    for (const role of HTTP_ROLES) {
      const seen = new Set<string>();
      const app = createHttpApp(ctx, { role, logger: pino({ level: 'silent' }), onRoute: recorder(seen) });
      await app.ready();
      await app.close();
      routes.set(role, seen);
    }
    const seen = new Set<string>();
    const service = createSignalingService(ctx.deps, defaultSignalingSettings(ctx.issuer.issuer));
    const signaling = createSignalingApp(service, { logger: pino({ level: 'silent' }), onRoute: recorder(seen) });
    try {
      await signaling.app.ready();
    } finally {
      service.close();
      signaling.endStreams();
      await signaling.app.close();
    }
    routes.set('signaling', seen);
  } finally {
    await bus.close();
    await store.close();
  }
  return routes;
}

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function resolve(doc: JsonObject, schema: Json | undefined): JsonObject {
  assert.ok(isObject(schema));
  const ref = schema['$ref'];
  if (typeof ref !== 'string') return schema;
  const target = (doc['components'] as JsonObject)['schemas'] as JsonObject;
  const found = target[ref.slice(COMPONENT.length)];
  assert.ok(isObject(found), `unresolved ${ref}`);
  return found;
}

/** The schema with every component reference replaced by the component itself. */
function inline(doc: JsonObject, schema: Json): Json {
  if (Array.isArray(schema)) return schema.map((s) => inline(doc, s));
  if (!isObject(schema)) return schema;
  if (typeof schema['$ref'] === 'string') return inline(doc, resolve(doc, schema));
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, inline(doc, v)]));
}

/** One event of a stream as a reader parses it: the frame's name, its id when it has one, its data as JSON. */
interface StreamEvent {
  readonly event: string;
  readonly id?: string;
  readonly data: Json;
}

/** An open `text/event-stream` response, parsed as it arrives. */
interface EventReader {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly events: StreamEvent[];
  /** The first event, received or still to come, that matches; rejects after 5 seconds. */
  next(match: (event: StreamEvent) => boolean, what: string): Promise<StreamEvent>;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

/** Opens an event stream; frames are parsed per the Server-Sent Events format (comments and `retry:` skipped). */
function readEvents(url: string, headers: Record<string, string>): Promise<EventReader> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET', headers, agent: false }, (res: IncomingMessage) => {
      const events: StreamEvent[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      let done = false;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const lines = buffer.slice(0, end).split('\n');
          buffer = buffer.slice(end + 2);
          const field = (name: string): string | undefined => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
          const event = field('event');
          const data = field('data');
          if (event === undefined || data === undefined) continue;
          const id = field('id');
          events.push({ event, ...(id !== undefined && { id }), data: JSON.parse(data) as Json });
        }
        for (const waiter of [...waiters]) waiter();
      });
      const ended = new Promise<void>((resolveEnded) => res.once('close', () => {
        done = true;
        for (const waiter of [...waiters]) waiter();
        resolveEnded();
      }));
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        ended,
        close: () => req.destroy(),
        next(match, what) {
          return new Promise((found, fail) => {
            const timer = setTimeout(() => settle(() => fail(new Error(`no ${what} within 5 s: ${JSON.stringify(events)}`))), 5000);
            const settle = (then: () => void): void => {
              clearTimeout(timer);
              waiters.delete(check);
              then();
            };
            const check = (): void => {
              const event = events.find(match);
              if (event) settle(() => found(event));
              else if (done) settle(() => fail(new Error(`the stream ended without ${what}: ${JSON.stringify(events)}`)));
            };
            waiters.add(check);
            check();
          });
        },
      });
    });
    req.on('error', reject);
    req.end();
  });
}

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
  const doc = buildOpenApiDocument();
  let server: ServedPlatform;
  let routes: Map<Host, Set<string>>;
  let f: Fixtures;
  const hostUrl = (host: Host): string => {
    const url = server.urls[host];
    assert.ok(url, `the test server runs the ${host} role`);
    return url;
  };

  before(async () => {
    routes = await registeredRoutes();
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

  it('documents every route the api, token and signaling hosts serve, and nothing they do not', () => {
    assert.ok(routes.get('signaling')!.has('POST /v1/signaling/join'), 'the signaling app\'s routes are enumerated');
    for (const host of ROUTED_HOSTS) {
      // the console's pages (GET /, its assets) are not API operations
      const served = [...routes.get(host)!].filter((route) => !(CONSOLE_ROUTES as readonly string[]).includes(route));
      const documented = OPERATIONS.filter((op) => op.hosts.includes(host)).map((op) => `${op.method} ${op.path}`);
      // a wildcard route is documented on every documented path under it
      const missing = served.flatMap((route) => {
        if (!route.endsWith('*')) return documented.includes(route) ? [] : [route];
        const [method, prefix] = route.slice(0, -1).split(' ') as [string, string];
        const under = [...new Set(documented.map((d) => d.slice(d.indexOf(' ') + 1)).filter((path) => path.startsWith(prefix)))];
        return under.length === 0 ? [route] : under.map((path) => `${method} ${path}`).filter((key) => !documented.includes(key));
      });
      const extra = documented.filter((d) => !served.some((route) => answers(route, d)));
      assert.deepEqual(missing, [], `${host} routes missing from the OpenAPI registry (server/src/http/openapi)`);
      assert.deepEqual(extra, [], `${host} operations documented but not served`);
    }
  });

  it('serves the document at GET /v1/openapi.json, byte for byte the committed docs/reference/openapi.json', async () => {
    const res = await request(`${server.api}/v1/openapi.json`);
    assert.equal(res.status, 200);
    assert.equal(res.text, readFileSync(join(ROOT, REFERENCE_FILES.openapi), 'utf8'));
    assert.equal(res.json<{ openapi: string }>().openapi, '3.1.0');
  });

  it('keeps the committed reference identical to a fresh generation (run npx tsx scripts/gen-api-docs.ts)', () => {
    const fresh = generateReference();
    for (const key of Object.keys(REFERENCE_FILES) as (keyof typeof REFERENCE_FILES)[]) {
      assert.equal(readFileSync(join(ROOT, REFERENCE_FILES[key]), 'utf8'), fresh[key], `${REFERENCE_FILES[key]} is out of date`);
    }
  });

  it('is a well-formed OpenAPI 3.1 document: unique ids, resolvable references, matching path parameters', () => {
    assert.equal(doc['openapi'], '3.1.0');
    assert.equal(doc['jsonSchemaDialect'], 'https://json-schema.org/draft/2020-12/schema');
    const text = JSON.stringify(doc);
    for (const [, ref] of text.matchAll(/"\$ref":"([^"]+)"/g)) resolve(doc, { $ref: ref! });
    const ids = OPERATIONS.map((op) => op.id);
    assert.equal(new Set(ids).size, ids.length);
    const schemes = Object.keys((doc['components'] as JsonObject)['securitySchemes'] as JsonObject);
    for (const [path, item] of Object.entries(doc['paths'] as JsonObject)) {
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const [method, raw] of Object.entries(item as JsonObject)) {
        const op = raw as JsonObject;
        const params = ((op['parameters'] ?? []) as JsonObject[]).filter((p) => p['in'] === 'path').map((p) => p['name']);
        assert.deepEqual(params, templated, `${method} ${path}: path parameters`);
        const statuses = Object.keys(op['responses'] as JsonObject);
        assert.ok(statuses.some((s) => s.startsWith('2') || s === '101'), `${method} ${path}: a success response`);
        for (const requirement of op['security'] as JsonObject[]) for (const name of Object.keys(requirement)) assert.ok(schemes.includes(name));
      }
    }
  });

  it('renders each body and response schema from the registry\'s zod schema, unchanged', () => {
    for (const op of OPERATIONS) {
      const operation = ((doc['paths'] as JsonObject)[op.path] as JsonObject)[op.method.toLowerCase()] as JsonObject;
      if (op.body) {
        const content = ((operation['requestBody'] as JsonObject)['content'] as JsonObject)['application/json'] as JsonObject;
        const documented = inline(doc, content['schema']!);
        const generated = z.toJSONSchema(op.body, { target: 'draft-2020-12', io: 'input' }) as JsonObject;
        delete generated['$schema'];
        assert.deepEqual(documented, generated, `${op.id}: request body`);
        assert.ok(op.body.safeParse(op.example).success, `${op.id}: the documented example is valid`);
      }
      for (const [status, spec] of Object.entries(op.responses)) {
        if (!spec.schema) continue;
        const media = spec.contentType ?? 'application/json';
        const content = (((operation['responses'] as JsonObject)[status] as JsonObject)['content'] as JsonObject)[media] as JsonObject;
        const generated = z.toJSONSchema(spec.schema, { target: 'draft-2020-12', io: 'output' }) as JsonObject;
        delete generated['$schema'];
        assert.deepEqual(inline(doc, content['schema']!), generated, `${op.id}: ${status} response`);
        if (spec.events) {
          const events = z.toJSONSchema(spec.events, { target: 'draft-2020-12', io: 'output' }) as JsonObject;
          delete events['$schema'];
          assert.deepEqual(inline(doc, content['x-event-schema']!), events, `${op.id}: ${status} events`);
        }
      }
    }
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
