import type { FastifyInstance } from 'fastify';
import { buildOpenApiDocument, serializeOpenApiDocument } from './document.ts';
import { PUBLIC_API } from '../billing/public-operations.ts';
import { registerOperation } from '../http/operation-route.ts';
import { etagOf, sendCacheable } from '../billing/public-routes.ts';

let served: { readonly body: string; readonly etag: string } | undefined;

/**
 * The serialized document and its ETag, built on the first request and then shared by every app
 * of the process: about 1 MB of text (and its build) that a process nobody asks for it never holds
 * (docs/operations/benchmarks.md, token issuance).
 */
function openApiBody(): { readonly body: string; readonly etag: string } {
  if (!served) {
    const body = serializeOpenApiDocument(buildOpenApiDocument());
    served = { body, etag: etagOf(body) };
  }
  return served;
}

/** `GET /v1/openapi.json`: the generated reference, byte for byte the committed docs/reference/openapi.json. */
export function registerOpenApiRoutes(app: FastifyInstance): void {
  registerOperation(app, PUBLIC_API.getOpenApiDocument, async (req, reply) => {
    const { body, etag } = openApiBody();
    return sendCacheable(req, reply, body, etag);
  });
}
