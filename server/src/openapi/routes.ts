import type { FastifyInstance } from 'fastify';
import { buildOpenApiDocument, serializeOpenApiDocument } from './document.ts';
import { PUBLIC_API } from '../billing/public-operations.ts';
import { registerOperation } from '../http/operation-route.ts';
import { etagOf, sendCacheable } from '../billing/public-routes.ts';

/** `GET /v1/openapi.json`: the generated reference, byte for byte the committed docs/reference/openapi.json. */
export function registerOpenApiRoutes(app: FastifyInstance): void {
  const body = serializeOpenApiDocument(buildOpenApiDocument());
  const etag = etagOf(body);
  registerOperation(app, PUBLIC_API.getOpenApiDocument, async (req, reply) => sendCacheable(req, reply, body, etag));
}
