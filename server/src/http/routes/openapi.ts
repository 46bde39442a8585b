import type { FastifyInstance } from 'fastify';
import { noQuerySchema, validateQuery } from '../../schemas/public.ts';
import { buildOpenApiDocument, serializeOpenApiDocument } from '../openapi/document.ts';
import { withSchemas } from '../openapi/registry.ts';
import { etagOf, sendCacheable } from './public.ts';

/** `GET /v1/openapi.json`: the generated reference, byte for byte the committed docs/reference/openapi.json. */
export function registerOpenApiRoutes(app: FastifyInstance): void {
  const body = serializeOpenApiDocument(buildOpenApiDocument());
  const etag = etagOf(body);
  app.get('/v1/openapi.json', withSchemas({}, { query: noQuerySchema }), async (req, reply) => {
    validateQuery(noQuerySchema, req.query);
    return sendCacheable(req, reply, body, etag);
  });
}
