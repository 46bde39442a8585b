/**
 * The OpenAPI document itself (docs/reference/openapi.json): it lists exactly the routes the hosts
 * register, matches a fresh generation, is well formed, and renders each schema from the zod schema
 * the route validates with. What a running server answers is in openapi.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { z } from 'zod';
import { generateReference, REFERENCE_FILES } from '../../scripts/api-docs/reference.ts';
import { CONSOLE_ROUTES } from '../../server/src/console-page/routes.ts';
import type { Host } from '../../server/src/http/registry.ts';
import { buildOpenApiDocument, type Json, type JsonObject } from '../../server/src/openapi/document.ts';
import { OPERATIONS } from '../../server/src/openapi/operations.ts';
import { ROOT } from '../helpers/root.ts';
import { answers, registeredRoutes, ROUTED_HOSTS } from './openapi-routes.ts';

const COMPONENT = '#/components/schemas/';

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

describe('OpenAPI document: every route, generated from the schemas the routes validate with', () => {
  const doc = buildOpenApiDocument();
  let routes: Map<Host, Set<string>>;

  before(async () => {
    routes = await registeredRoutes();
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
});
