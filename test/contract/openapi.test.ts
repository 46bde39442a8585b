import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { z } from 'zod';
import { createMemoryBus } from '../../server/src/adapters/bus/memory.ts';
import { loadKeyRing } from '../../server/src/adapters/keys/file-keyring.ts';
import { createMemoryLimiter } from '../../server/src/adapters/limiter/memory.ts';
import { createSqliteStore } from '../../server/src/adapters/store/sqlite.ts';
import { createHttpApp, type HttpRole } from '../../server/src/http/app.ts';
import type { HttpContext } from '../../server/src/http/context.ts';
import { buildOpenApiDocument, errorStatus, type Json, type JsonObject } from '../../server/src/http/openapi/document.ts';
import { OPERATIONS } from '../../server/src/http/openapi/operations.ts';
import { generateReference, REFERENCE_FILES } from '../../server/src/http/openapi/reference.ts';
import { DEFAULT_BODY_LIMIT, errorSchema, type Operation, type RouteSchemas } from '../../server/src/http/openapi/registry.ts';
import { createCustomer, type Customer } from '../helpers/customer.ts';
import { request, type HttpResult } from '../helpers/http.ts';
import { ROOT, startServer, type RunningServer } from '../helpers/platform.ts';

const HTTP_ROLES: readonly HttpRole[] = ['api', 'token'];
const COMPONENT = '#/components/schemas/';

/** `:id` → `{id}`: fastify's route form to the document's. */
const openApiPath = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** Every route each HTTP role registers, as `METHOD /path` (HEAD routes are fastify's automatic twins of GET). */
async function registeredRoutes(): Promise<{ routes: Map<HttpRole, Set<string>>; declared: Map<string, RouteSchemas> }> {
  const dir = mkdtempSync(join(tmpdir(), 'rtc-openapi-'));
  const nowMs = Date.now();
  const store = createSqliteStore(join(dir, 'rtc.sqlite'));
  const bus = createMemoryBus(() => undefined);
  const ctx: HttpContext = {
    deps: { store, limiter: createMemoryLimiter(), bus, clock: { nowMs: () => Date.now() }, keys: loadKeyRing(dir, Math.floor(nowMs / 1000)) },
    issuer: { issuer: 'rtc-platform', sfuHost: 'localhost', sfuPort: 7880 },
    limits: { appPerMinute: 1200, addressPerMinute: 2400 },
    trustProxy: undefined,
  };
  const routes = new Map<HttpRole, Set<string>>();
  const declared = new Map<string, RouteSchemas>();
  try {
    for (const role of HTTP_ROLES) {
      const seen = new Set<string>();
      const app = createHttpApp(ctx, {
        role, logger: pino({ level: 'silent' }),
        onRoute: (route) => {
          for (const method of [route.method].flat()) {
            if (method === 'HEAD') continue;
            const key = `${method} ${openApiPath(route.url)}`;
            seen.add(key);
            const schemas = (route.config as { schemas?: RouteSchemas } | undefined)?.schemas;
            if (schemas) declared.set(key, schemas);
          }
        },
      });
      await app.ready();
      await app.close();
      routes.set(role, seen);
    }
  } finally {
    await bus.close();
    await store.close();
  }
  return { routes, declared };
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

/** A JSON value of another type than the schema allows, or undefined when any value is allowed. */
function wrongValue(schema: JsonObject): Json | undefined {
  const type = Array.isArray(schema['type']) ? schema['type'][0] : schema['type'];
  if (schema['enum'] !== undefined || schema['const'] !== undefined) return 12345;
  switch (type) {
    case 'string': return 12345;
    case 'integer': case 'number': return 'not a number';
    case 'boolean': return 'yes';
    case 'array': return 'not a list';
    case 'object': return 'not an object';
    default: return undefined;
  }
}

/** What the contract needs to call each operation for real: accounts, ids, handles. */
interface Fixtures {
  readonly customer: Customer;
  readonly spareAppId: string;
  readonly revocationHandle: string;
  readonly spareRefreshToken: string;
  readonly spareAccessToken: string;
  readonly quoteId: string;
  readonly requestId: string;
  readonly freeProjectId: string;
}

describe('OpenAPI document: every route, generated from the schemas the routes validate with', () => {
  const doc = buildOpenApiDocument();
  let server: RunningServer;
  let routes: Map<HttpRole, Set<string>>;
  let declared: Map<string, RouteSchemas>;
  let f: Fixtures;

  before(async () => {
    ({ routes, declared } = await registeredRoutes());
    server = await startServer();
    const customer = await createCustomer(server.api);
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
    f = {
      customer,
      spareAppId: spare.json<{ app_id: string }>().app_id,
      revocationHandle: token.json<{ media: { revocation_handle: string } }>().media.revocation_handle,
      spareRefreshToken: first.refresh_token,
      spareAccessToken: second.access_token,
      quoteId: quote.json<{ id: string }>().id,
      requestId: subscription.json<{ id: string }>().id,
      freeProjectId: await project('free for a subscription request'),
    };
  });
  after(async () => {
    await server?.stop();
  });

  it('documents every route the api and token hosts serve, and nothing they do not', () => {
    for (const role of HTTP_ROLES) {
      const served = routes.get(role)!;
      const documented = new Set(OPERATIONS.filter((op) => op.hosts.includes(role)).map((op) => `${op.method} ${op.path}`));
      const missing = [...served].filter((r) => !documented.has(r));
      const extra = [...documented].filter((r) => !served.has(r));
      assert.deepEqual(missing, [], `${role} routes missing from the OpenAPI registry (server/src/http/openapi)`);
      assert.deepEqual(extra, [], `${role} operations documented but not served`);
    }
  });

  it('documents the very schema objects that routes name as theirs (config.schemas)', () => {
    assert.ok(declared.size >= 12, 'the public and billing routes name their schemas');
    for (const [key, schemas] of declared) {
      const op = OPERATIONS.find((o) => `${o.method} ${o.path}` === key);
      assert.ok(op, `${key} is not documented`);
      assert.equal(schemas.body, op.body, `${key}: the body schema the route validates with is not the documented one`);
      assert.equal(schemas.query, op.query, `${key}: the query schema the route validates with is not the documented one`);
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
        assert.ok(statuses.some((s) => s.startsWith('2')), `${method} ${path}: a success response`);
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
        const content = (((operation['responses'] as JsonObject)[status] as JsonObject)['content'] as JsonObject)['application/json'] as JsonObject;
        const generated = z.toJSONSchema(spec.schema, { target: 'draft-2020-12', io: 'output' }) as JsonObject;
        delete generated['$schema'];
        assert.deepEqual(inline(doc, content['schema']!), generated, `${op.id}: ${status} response`);
      }
    }
  });

  /** Headers, path and body overrides that let each documented example succeed on this server. */
  function call(op: Operation, body: unknown, extra: { query?: string; headers?: Record<string, string> } = {}): Promise<HttpResult> {
    const params: Record<string, string> = {
      id: f.customer.projectId, app_id: f.spareAppId, quote_id: f.quoteId, request_id: f.requestId,
    };
    const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
      assert.ok(params[name], `no fixture for path parameter ${name}`);
      return encodeURIComponent(params[name]);
    });
    const headers: Record<string, string> = { ...extra.headers };
    if (op.auth === 'basic') headers['authorization'] = f.customer.auth;
    if (op.auth === 'bearer') headers['authorization'] = `Bearer ${op.id === 'logout' ? f.spareAccessToken : f.customer.accessToken}`;
    const base = op.hosts.includes('api') ? server.api : server.token;
    const url = `${base}${path}${extra.query === undefined ? '' : `?${extra.query}`}`;
    return request(url, { method: op.method, headers, ...(body !== undefined && { body }) });
  }

  function exampleOf(op: Operation): unknown {
    if (op.example === undefined) return undefined;
    const example = op.example as Record<string, unknown>;
    switch (op.id) {
      case 'revokeRtcToken': return { revocation_handle: f.revocationHandle };
      case 'issueServiceToken': return { ...example, app_id: f.customer.appId };
      case 'refreshSession': return { refresh_token: f.spareRefreshToken };
      case 'createSubscriptionRequest': return { ...example, project_id: f.freeProjectId };
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

  // in the registry's order: each documented example must succeed with the documented response
  for (const op of OPERATIONS.filter((o) => o.hosts.some((h) => (HTTP_ROLES as readonly string[]).includes(h)))) {
    describe(`${op.method} ${op.path} (${op.id})`, () => {
      it('answers its documented example with a documented success and body', async () => {
        const res = await call(op, exampleOf(op));
        assertDocumented(op, res);
        assert.ok(res.status >= 200 && res.status < 300, `${op.id}: ${res.status} ${res.text.slice(0, 300)}`);
      });

      if (op.body) {
        it('validates the body with the documented schema: unknown, missing and mistyped fields are 400 naming the field', async () => {
          const example = exampleOf(op) as Record<string, Json>;
          const content = (((((doc['paths'] as JsonObject)[op.path] as JsonObject)[op.method.toLowerCase()] as JsonObject)['requestBody'] as JsonObject)['content'] as JsonObject)['application/json'] as JsonObject;
          const schema = resolve(doc, content['schema']);
          const expect400 = async (body: unknown, name: string, what: string) => {
            const res = await call(op, body);
            assert.equal(res.status, 400, `${op.id}: ${what}: ${res.status} ${res.text}`);
            const err = res.json<{ error: string; message: string }>();
            assert.equal(err.error, 'invalid_request');
            assert.ok(err.message.includes(name), `${op.id}: ${what}: "${err.message}" names ${name}`);
            assertDocumented(op, res);
          };
          await expect400({ ...example, x_undocumented: 1 }, '"x_undocumented"', 'an unknown field');
          for (const name of (schema['required'] ?? []) as string[]) {
            const rest = Object.fromEntries(Object.entries(example).filter(([key]) => key !== name));
            await expect400(rest, name, `without ${name}`);
          }
          for (const [name, prop] of Object.entries(schema['properties'] as JsonObject)) {
            const wrong = wrongValue(resolve(doc, prop));
            if (wrong !== undefined) await expect400({ ...example, [name]: wrong }, name, `${name} of the wrong type`);
          }
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
        it('validates the query with the documented parameters: unknown, repeated and bad values are 400 naming them', async () => {
          const unknown = await call(op, undefined, { query: 'x_undocumented=1' });
          assert.equal(unknown.status, 400);
          assert.equal(unknown.json<{ message: string }>().message, 'unknown query parameter "x_undocumented" is not allowed');
          for (const [name, raw] of Object.entries(op.query!.shape)) {
            const schema = z.toJSONSchema(raw as z.ZodType, { io: 'input' }) as JsonObject;
            const bad = schema['type'] === 'integer' || schema['enum'] !== undefined ? `${name}=not-valid` : `${name}=a&${name}=b`;
            const res = await call(op, undefined, { query: bad });
            assert.equal(res.status, 400, `${op.id}: ${bad}`);
            assert.match(res.json<{ message: string }>().message, new RegExp(`^${name} `), `${op.id}: ${bad}`);
            assertDocumented(op, res);
          }
        });
      }
    });
  }
});
