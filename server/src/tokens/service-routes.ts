import type { StoreHealth } from '../core/ports.ts';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../core/errors.ts';
import { issueToken } from './issue.ts';
import type { HttpContext } from '../http/context.ts';
import { TOKEN_API } from './operations.ts';
import { registerOperation } from '../http/operation-route.ts';
import { createReadiness } from '../http/readiness.ts';
import { authenticateTokenCaller, countIssue, tokenApiGate } from './routes.ts';
import type { CredentialStore, ProjectStore } from '../customers/store.ts';
import type { RevocationStore } from './store.ts';

/** `POST /v1/tokens` on the token host (docs/reference/token-api.md, "Token host extras"): the short form of the token request. */
export function registerTokenServiceRoutes(app: FastifyInstance, ctx: HttpContext<CredentialStore & RevocationStore & ProjectStore & StoreHealth>): void {
  registerOperation(app, TOKEN_API.issueServiceToken, async (req, reply, input) => {
    const cred = await authenticateTokenCaller(ctx, req);
    const body = input.body();
    if (body.app_id !== cred.appId) {
      throw new ApiError('invalid_request', 'app_id must be the App ID of the authenticating credential');
    }
    // the 400 names this endpoint's field (ttl_sec), not the token request's ttl_seconds
    if (body.ttl_sec !== undefined && body.ttl_sec > cred.maxTtlSeconds) {
      throw new ApiError('invalid_request', `ttl_sec must be at most ${cred.maxTtlSeconds}, the limit set on this credential`);
    }
    const token = await issueToken(ctx.deps, ctx.issuer, {
      projectId: cred.projectId, appId: cred.appId, publisher: cred.scopes.publisher,
      subscriber: cred.scopes.subscriber, maxTtlSeconds: cred.maxTtlSeconds,
    }, { room_id: body.room_id, user_id: body.user_id, role: body.role, ttl_seconds: body.ttl_sec });
    return reply.code(200).send(token);
  }, { onRequest: tokenApiGate(ctx), onResponse: countIssue(ctx.metrics) });
}

/** `GET /health`, `GET /ready` and `GET /.well-known/jwks.json`, unauthenticated. */
export function registerPublicKeyRoutes(app: FastifyInstance, ctx: HttpContext<CredentialStore & RevocationStore & ProjectStore & StoreHealth>): void {
  // built again only when the key ring was reloaded with other keys (docs/operations/configuration.md, "Keys")
  let jwks = { of: undefined as unknown, body: '' };
  const currentJwks = (): string => {
    const verifying = ctx.deps.keys.verifying;
    if (jwks.of !== verifying) {
      jwks = {
        of: verifying,
        body: JSON.stringify({
          keys: verifying.map((k) => ({ ...k.publicKey.export({ format: 'jwk' }), kid: k.kid, use: 'sig', alg: 'EdDSA' })),
        }),
      };
    }
    return jwks.body;
  };
  registerOperation(app, TOKEN_API.getJwks, async (_req, reply) =>
    reply.header('cache-control', 'public, max-age=300').type('application/json').send(currentJwks()));

  registerOperation(app, TOKEN_API.getHealth, async (req, reply) => {
    try {
      await ctx.deps.store.ping();
      return reply.send({ status: 'ok' });
    } catch (err) {
      req.log.warn({ err }, 'health check failed');
      return reply.code(503).send({ status: 'unavailable', store: 'unavailable' });
    }
  });

  // docs/operations/metrics.md, "Readiness": more than health; 503 names what is missing
  const readiness = ctx.readiness ?? createReadiness(ctx.deps, { startedAlready: true });
  registerOperation(app, TOKEN_API.getReady, async (_req, reply) => {
    const report = await readiness.check();
    return reply.code(report.status === 'ready' ? 200 : 503).send(report);
  });
}
