import { z } from 'zod';
import type { ErrorCode } from '@rtc/protocol';

/**
 * The operation records: one per operation of every network role, declared by each module in its
 * `operations.ts`. Routes are registered from them (`operation-route.ts`: method, path, schemas,
 * auth, body limit, and the hosts that serve it), and the OpenAPI document (`openapi/document.ts`)
 * is generated from them, so the two cannot drift.
 */

/** The network roles (docs/operations/configuration.md, "Roles") that answer HTTP (media: only its WebSocket upgrade). */
export const HOSTS = ['api', 'token', 'signaling', 'media'] as const;
export type Host = (typeof HOSTS)[number];

/**
 * `none`, HTTP Basic with an App ID and App Secret, a console session's Bearer `cs_…` token, a
 * signaling token as `Authorization: Bearer` (`signaling`), or a signaling token in the JSON body's
 * `token` field (`signalingBody`: no HTTP security scheme can say that; the body schema holds it).
 */
export type Auth = 'none' | 'basic' | 'bearer' | 'signaling' | 'signalingBody';

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE' | 'OPTIONS';

export interface ResponseSpec {
  readonly description: string;
  /** The body; omitted for an empty body (204, 304). */
  readonly schema?: z.ZodType;
  /** Default `application/json`. */
  readonly contentType?: string;
  /** Response headers by name, with a description each. */
  readonly headers?: Readonly<Record<string, string>>;
  /** For a `text/event-stream` body: one event of the stream (its `event`, `id` and parsed `data`). */
  readonly events?: z.ZodType;
}

/** An error the operation may answer: a catalogue code at its default status, or at another status. */
export type ErrorSpec = ErrorCode | readonly [status: number, code: ErrorCode];

export interface Operation {
  /** Unique and stable: `operationId` of the document. */
  readonly id: string;
  readonly method: Method;
  /** OpenAPI form: `/v1/projects/{id}`. */
  readonly path: string;
  readonly hosts: readonly Host[];
  readonly tag: string;
  readonly summary: string;
  readonly description?: string;
  readonly auth: Auth;
  /** One schema per `{name}` of the path. */
  readonly pathParams?: Readonly<Record<string, z.ZodType>>;
  /** The strict query schema the route validates with (unknown parameters are 400). */
  readonly query?: z.ZodObject;
  /** Request headers the operation reads, one schema each. */
  readonly headers?: Readonly<Record<string, z.ZodType>>;
  /** The body schema the route validates with (a named component). */
  readonly body?: z.ZodType;
  /** The body may be left out (read as `{}`); the document then marks it not required. */
  readonly bodyOptional?: boolean;
  /** A valid body, shown in the document and sent by the contract test. */
  readonly example?: unknown;
  readonly bodyLimitBytes?: number;
  readonly responses: Readonly<Record<number, ResponseSpec>>;
  readonly errors: readonly ErrorSpec[];
  /** Public and cacheable: ETag, Cache-Control: public, 304 on If-None-Match. */
  readonly cacheable?: boolean;
}

/** Named request schemas (rendered as input: what a client may send). */
export const requestComponents = z.registry<{ id: string }>();
/** Named response schemas (rendered as output: what the server sends). */
export const responseComponents = z.registry<{ id: string }>();

/** Gives a request schema its component name; returns the same schema object. */
export function requestComponent<S extends z.ZodType>(schema: S, id: string): S {
  if (!requestComponents.has(schema)) requestComponents.add(schema, { id });
  return schema;
}

/** Gives a response schema its component name; returns the same schema object. */
export function responseComponent<S extends z.ZodType>(schema: S, id: string): S {
  if (!responseComponents.has(schema)) responseComponents.add(schema, { id });
  return schema;
}

/** The error body of every endpoint: `{"error": code, "message": text}`. */
export const errorSchema = responseComponent(z.strictObject({
  error: z.string().meta({ description: 'a code of the error catalogue' }),
  message: z.string().meta({ description: 'what went wrong; for 400, the violated rule' }),
}), 'Error');

/** A time in a response: whole seconds since the Unix epoch. */
export const epochSeconds = z.int().min(0).meta({ description: 'seconds since the Unix epoch' });

/** A path parameter: an identifier looked up in the store (malformed or foreign ids are 404). */
export const idParam = (description: string) => z.string().meta({ description });

/** The body limit of the api and token roles' routes whose operation sets none; the contract test sends bodies of this size. */
export const DEFAULT_BODY_LIMIT = 64 * 1024;
