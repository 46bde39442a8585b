import { z } from 'zod';
import { ERROR_STATUS } from '@rtc/protocol';
import { OPERATIONS } from './operations.ts';
import {
  DEFAULT_BODY_LIMIT, HOSTS, requestComponents, responseComponents, type Auth, type ErrorSpec, type Host, type Operation,
} from '../http/registry.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';
const COMPONENT_PREFIX = '#/components/schemas/';

const SERVERS: Readonly<Record<Host, JsonObject>> = {
  api: {
    url: '{base_url}', description: 'api host: token API, customer API, public API',
    variables: { base_url: { default: 'http://127.0.0.1:8080', description: 'RTC_API_PORT; https when TLS is configured' } },
  },
  token: {
    url: '{token_url}', description: 'token host: token API, POST /v1/tokens, health, keys',
    variables: { token_url: { default: 'http://127.0.0.1:8081', description: 'RTC_TOKEN_PORT; https when TLS is configured' } },
  },
  signaling: {
    url: '{signaling_url}', description: 'signaling host (signaling.url of a token response): presence, messages, event stream, health',
    variables: { signaling_url: { default: 'http://127.0.0.1:8082', description: 'RTC_SIGNALING_PORT; https when TLS is configured' } },
  },
  media: {
    url: '{media_url}', description: 'media host (media.sfu_host and media.sfu_port of a token response): the WebSocket of docs/protocol/media.md',
    variables: { media_url: { default: 'ws://127.0.0.1:7880', description: 'RTC_MEDIA_PORT; wss when TLS is configured' } },
  },
};

const SECURITY_SCHEMES: JsonObject = {
  appBasic: {
    type: 'http', scheme: 'basic',
    description: 'App ID as user name, App Secret as password. Every failure is the same 401 invalid_credentials.',
  },
  consoleSession: {
    type: 'http', scheme: 'bearer', bearerFormat: 'cs_…',
    description: 'access_token of POST /v1/auth/register, /login or /refresh. Never accepted by the token API.',
  },
  signalingToken: {
    type: 'http', scheme: 'bearer', bearerFormat: 'JWS',
    description: 'signaling.token of a token response, on the GET requests of the signaling host. Its POST requests carry the '
      + 'token in the JSON body as token instead (x-body-token), where a Bearer header is not read.',
  },
};

const SECURITY: Readonly<Record<Auth, Json>> = {
  none: [],
  basic: [{ appBasic: [] }],
  bearer: [{ consoleSession: [] }],
  signaling: [{ signalingToken: [] }],
  // a credential in the JSON body is no HTTP security scheme: the operation's x-body-token names the field
  signalingBody: [],
};

/** The body field that carries the credential, for `signalingBody`. */
const BODY_TOKEN_FIELD = 'token';

const toJson = (value: unknown): JsonObject => JSON.parse(JSON.stringify(value)) as JsonObject;

/** A JSON Schema as it sits inside the document: no `$schema` or `$id` of its own. */
function bare(schema: unknown): JsonObject {
  const json = toJson(schema);
  delete json['$schema'];
  delete json['$id'];
  return json;
}

function componentSchemas(): JsonObject {
  const options = { target: 'draft-2020-12', uri: (id: string) => `${COMPONENT_PREFIX}${id}` } as const;
  const requests = z.toJSONSchema(requestComponents, { ...options, io: 'input' }).schemas;
  const responses = z.toJSONSchema(responseComponents, { ...options, io: 'output' }).schemas;
  const all: JsonObject = {};
  for (const [id, schema] of [...Object.entries(requests), ...Object.entries(responses)]) {
    if (Object.hasOwn(all, id)) throw new TypeError(`two schemas are named ${id}`);
    all[id] = bare(schema);
  }
  return Object.fromEntries(Object.entries(all).sort(([a], [b]) => (a < b ? -1 : 1)));
}

function schemaRef(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const id = (io === 'input' ? requestComponents : responseComponents).get(schema)?.id;
  return id ? { $ref: `${COMPONENT_PREFIX}${id}` } : bare(z.toJSONSchema(schema, { target: 'draft-2020-12', io }));
}

function parameter(name: string, where: 'path' | 'query' | 'header', schema: z.ZodType): JsonObject {
  const { description, ...json } = bare(z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' }));
  return {
    name, in: where, required: where === 'path' || !schema.safeParse(undefined).success,
    ...(typeof description === 'string' && { description }), schema: json,
  };
}

/** An error spec as (status, code). */
export function errorStatus(spec: ErrorSpec): [number, string] {
  return typeof spec === 'string' ? [ERROR_STATUS[spec], spec] : [spec[0], spec[1]];
}

function errorResponses(op: Operation): JsonObject {
  const byStatus = new Map<number, string[]>();
  for (const spec of op.errors) {
    const [status, code] = errorStatus(spec);
    const codes = byStatus.get(status) ?? [];
    if (!codes.includes(code)) codes.push(code);
    byStatus.set(status, codes);
  }
  const out: JsonObject = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: JsonObject = {};
    if (status === 429) headers['Retry-After'] = { description: 'whole seconds to wait', schema: { type: 'integer', minimum: 1 } };
    if (status === 401 && op.auth !== 'none') {
      headers['WWW-Authenticate'] = { schema: { type: 'string', const: op.auth === 'basic' ? 'Basic realm="rtc"' : 'Bearer realm="rtc"' } };
    }
    out[String(status)] = {
      description: codes.join(', '),
      ...(Object.keys(headers).length > 0 && { headers }),
      content: {
        'application/json': {
          schema: { allOf: [{ $ref: `${COMPONENT_PREFIX}Error` }, { properties: { error: { enum: codes } } }] },
        },
      },
    };
  }
  return out;
}

function operationObject(op: Operation): JsonObject {
  const parameters: Json[] = [];
  for (const [name, schema] of Object.entries(op.pathParams ?? {})) parameters.push(parameter(name, 'path', schema));
  for (const [name, schema] of Object.entries(op.query?.shape ?? {})) parameters.push(parameter(name, 'query', schema as z.ZodType));
  for (const [name, schema] of Object.entries(op.headers ?? {})) parameters.push(parameter(name, 'header', schema));
  if (op.cacheable) {
    parameters.push({
      name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' },
      description: 'the ETag of a copy the client holds; 304 when it is still current',
    });
  }

  const responses: JsonObject = {};
  for (const [status, spec] of Object.entries(op.responses)) {
    const headers: JsonObject = {};
    for (const [name, description] of Object.entries(spec.headers ?? {})) headers[name] = { description, schema: { type: 'string' } };
    if (op.cacheable && status === '200') {
      headers['ETag'] = { description: 'strong validator of the body', schema: { type: 'string' } };
      headers['Cache-Control'] = { schema: { type: 'string', const: 'public, max-age=300' } };
    }
    const media: JsonObject = {
      ...(spec.schema && { schema: schemaRef(spec.schema, 'output') }),
      // OpenAPI 3.1 has no schema for the items of a stream: each event's, as an extension
      ...(spec.events && { 'x-event-schema': schemaRef(spec.events, 'output') }),
    };
    responses[status] = {
      description: spec.description,
      ...(Object.keys(headers).length > 0 && { headers }),
      ...(Object.keys(media).length > 0 && { content: { [spec.contentType ?? 'application/json']: media } }),
    };
  }
  if (op.cacheable) {
    responses['304'] = {
      description: 'Not Modified: If-None-Match names the current ETag; no body',
      headers: { ETag: { schema: { type: 'string' } }, 'Cache-Control': { schema: { type: 'string', const: 'public, max-age=300' } } },
    };
  }
  for (const [status, response] of Object.entries(errorResponses(op))) {
    if (Object.hasOwn(responses, status)) throw new TypeError(`${op.id}: status ${status} is both a response and an error`);
    responses[status] = response;
  }
  const sorted = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));

  const limit = op.bodyLimitBytes ?? DEFAULT_BODY_LIMIT;
  return {
    operationId: op.id,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description !== undefined && { description: op.description }),
    servers: op.hosts.map((h) => SERVERS[h]),
    'x-hosts': [...op.hosts],
    security: SECURITY[op.auth],
    ...(op.auth === 'signalingBody' && { 'x-body-token': BODY_TOKEN_FIELD }),
    ...(parameters.length > 0 && { parameters }),
    ...(op.body && {
      requestBody: {
        required: op.bodyOptional !== true,
        description: `JSON object${op.bodyOptional === true ? ' (may be left out: read as {})' : ''}; unknown fields are 400 invalid_request; at most ${limit} bytes`,
        content: {
          'application/json': {
            schema: schemaRef(op.body, 'input'),
            ...(op.example !== undefined && { example: toJson(op.example) }),
          },
        },
      },
      'x-max-body-bytes': limit,
    }),
    responses: sorted,
  };
}

const DESCRIPTION = [
  'Every endpoint of the platform, generated from the zod schemas its routes validate requests with.',
  '',
  '- Bodies are JSON (`Content-Type: application/json`); an unknown field, a missing field or a bad value is',
  '  `400 invalid_request` whose message names the rule; so is an unknown or repeated query parameter.',
  '- Every error body is `{"error": code, "message": text}`; 429 carries `Retry-After`.',
  '- Every response of the api, token and signaling hosts carries `X-Request-Id` and is `Cache-Control: no-store`, except',
  '  the public documents, which are `public, max-age=300` with an `ETag` and answer `304` to a matching `If-None-Match`.',
  '- Money is an integer in the minor unit of its currency (`*_minor` fields).',
  '- The signaling host (`signaling.url` of a token response) takes the signaling token as `token` in the JSON body of a',
  '  POST (`x-body-token`) and as `Authorization: Bearer` on a GET; its event stream is Server-Sent Events, each event',
  '  described by `x-event-schema`. Protocol: `docs/protocol/signaling.md`.',
  '- The media host answers HTTP only to open its WebSocket (`101 Switching Protocols`); the protocol spoken over it',
  '  (handshake, frames, control messages, close codes) is `docs/protocol/media.md`, which OpenAPI cannot describe.',
].join('\n');

/** The security schemes some operation uses. */
function usedSchemes(operations: readonly Operation[]): JsonObject {
  const names = new Set(operations.flatMap((op) => (SECURITY[op.auth] as JsonObject[]).flatMap((r) => Object.keys(r))));
  return Object.fromEntries(Object.entries(SECURITY_SCHEMES).filter(([name]) => names.has(name)));
}

/** Builds the OpenAPI 3.1 document of `operations` (every operation of the platform by default). */
export function buildOpenApiDocument(operations: readonly Operation[] = OPERATIONS): JsonObject {
  const paths: JsonObject = {};
  const ids = new Set<string>();
  const tags: string[] = [];
  for (const op of operations) {
    if (ids.has(op.id)) throw new TypeError(`operation id ${op.id} is used twice`);
    ids.add(op.id);
    if (!tags.includes(op.tag)) tags.push(op.tag);
    const item = (paths[op.path] ??= {}) as JsonObject;
    const method = op.method.toLowerCase();
    if (Object.hasOwn(item, method)) throw new TypeError(`${op.method} ${op.path} is listed twice`);
    item[method] = operationObject(op);
  }
  const used = HOSTS.filter((h) => operations.some((op) => op.hosts.includes(h)));
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: DIALECT,
    info: {
      title: 'RTC platform API',
      version: 'v1',
      summary: 'Token API, token service, customer API, public catalog and pricing, billing, signaling, media connection',
      description: DESCRIPTION,
    },
    servers: used.map((h) => SERVERS[h]),
    tags: tags.map((name) => ({ name })),
    paths,
    components: { schemas: componentSchemas(), securitySchemes: usedSchemes(operations) },
  };
}

/** The document as served and committed: two-space JSON and a final newline. */
export function serializeOpenApiDocument(doc: JsonObject): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}
