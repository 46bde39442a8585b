import type { FastifyInstance, FastifyRequest, onResponseHookHandler } from 'fastify';
import { TOKEN_API_BODY_LIMIT_BYTES } from '@rtc/protocol';
import { ApiError } from '../core/errors.ts';
import type { TokenMetrics } from '../metrics/metrics.ts';
import type { AuthCredential } from '../customers/store.ts';
import { admitTokenRequest, authenticateApp, presentedCredential, type Admitted } from './app-auth.ts';
import { createCredentialCache, type CredentialCache } from './credential-cache.ts';
import { limiterAdmission } from '../limiter/admission.ts';
import { issueToken } from './issue.ts';
import { revocationLimiter, revokeByHandle } from './revoke.ts';
import type { HttpContext } from '../http/context.ts';
import { TOKEN_API } from './operations.ts';
import { registerOperation } from '../http/operation-route.ts';
import type { CredentialStore, ProjectStore } from '../customers/store.ts';
import type { RevocationStore } from './store.ts';

/** What a token route's gate learned of a request, for its handler (`req.routeState`). */
class GateState {
  readonly admitted: Admitted;
  readonly cache: CredentialCache | undefined;

  constructor(admitted: Admitted, cache: CredentialCache | undefined) {
    this.admitted = admitted;
    this.cache = cache;
  }
}

/** The media type fastify's `application/json` parser accepts (anything else is 415 before authentication). */
const isJson = (contentType: string | undefined): boolean =>
  contentType !== undefined && contentType.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';

/**
 * Steps 1-3 of the token API's order of checks (docs/reference/token-api.md), run before the body is read:
 * address blocked or over its rate limit (429), browser Origin (403), declared body over 8 KB (413; the
 * room service operations that carry metadata or data allow `bodyLimitBytes`, docs/reference/room-api.md).
 * In a cluster the same round trip to Redis confirms the credential this process cached and counts
 * its App ID (docs/decisions/scale-out.md, "Credential cache"), when no check before authentication can fail any more.
 */
export function tokenApiGate(ctx: HttpContext<CredentialStore & RevocationStore & ProjectStore>, bodyLimitBytes = TOKEN_API_BODY_LIMIT_BYTES) {
  const admission = ctx.deps.tokenAdmission ?? limiterAdmission(ctx.deps.limiter);
  // one per route: each warms on its own first requests
  const cache = ctx.deps.tokenAdmission ? createCredentialCache() : undefined;
  return async (req: FastifyRequest): Promise<void> => {
    // docs/decisions/tokens.md, "A browser": a browser Origin gets 403 server_side_only. Sec-Fetch-Mode is no sign of a
    // browser: Node's own fetch sends it too.
    const fromBrowser = req.headers.origin !== undefined;
    const declared = req.headers['content-length'];
    const tooLarge = Number(declared ?? 0) > bodyLimitBytes;
    const mayCountApp = !fromBrowser && declared !== undefined && !tooLarge && isJson(req.headers['content-type']);
    const presented = presentedCredential(req.headers.authorization);
    const admitted = await admitTokenRequest(ctx.deps, admission, cache, req.clientAddress, ctx.limits, presented, mayCountApp);
    if (fromBrowser) {
      throw new ApiError('server_side_only', 'the token API is for servers: requests from a browser are refused');
    }
    if (tooLarge) {
      throw new ApiError('invalid_request', `the request body exceeds ${bodyLimitBytes} bytes`, { status: 413 });
    }
    req.routeState = new GateState(admitted, cache);
  };
}

/** Steps 4-7: authentication, App ID rate limit, IP allowlist, archived project. */
export function authenticateTokenCaller(ctx: HttpContext<CredentialStore & RevocationStore & ProjectStore>, req: FastifyRequest): Promise<AuthCredential> {
  const state = req.routeState;
  if (!(state instanceof GateState)) throw new Error('the token API gate did not run for this route');
  return authenticateApp(ctx.deps, state.admitted, state.cache, req.clientAddress, ctx.limits);
}

/**
 * Counts a token request once it is answered (docs/operations/metrics.md): issued, or refused by
 * its error code, and its latency. Undefined without metrics.
 */
export function countIssue(metrics: TokenMetrics | undefined): onResponseHookHandler | undefined {
  if (!metrics) return undefined;
  return (req, reply, done) => {
    const seconds = reply.elapsedTime / 1000;
    if (reply.statusCode === 200) metrics.issued(seconds);
    else metrics.refused(req.errorCode || 'internal_error', seconds);
    // TURN credentials are issued with the token, or the request is refused for want of a relay
    if (turnAsked.has(req)) {
      if (reply.statusCode === 200) metrics.turnCredentials('issued');
      else if (req.errorCode === 'turn_unavailable') metrics.turnCredentials('unavailable');
    }
    done();
  };
}

/** Token requests whose valid body asked for TURN credentials (`turn: true`), for the TURN count. */
const turnAsked = new WeakSet<FastifyRequest>();

/** `POST /v1/rtc/tokens` and `POST /v1/rtc/tokens/revoke`: identical on the api and token hosts. */
export function registerRtcTokenRoutes(app: FastifyInstance, ctx: HttpContext<CredentialStore & RevocationStore & ProjectStore>): void {
  const gate = { onRequest: tokenApiGate(ctx), onResponse: countIssue(ctx.metrics) };

  registerOperation(app, TOKEN_API.issueRtcToken, async (req, reply, input) => {
    const cred = await authenticateTokenCaller(ctx, req);
    const body = input.body();
    if (body.turn === true) turnAsked.add(req);
    const token = await issueToken(ctx.deps, ctx.issuer, {
      projectId: cred.projectId, appId: cred.appId, publisher: cred.scopes.publisher,
      subscriber: cred.scopes.subscriber, maxTtlSeconds: cred.maxTtlSeconds,
    }, body);
    return reply.code(200).send(token);
  }, gate);

  // a customer can revoke while the shared limiter is unreachable (docs/operations/scale-out.md, "Redis down")
  const revokeCtx: HttpContext<CredentialStore & RevocationStore & ProjectStore> = { ...ctx, deps: { ...ctx.deps, limiter: revocationLimiter(ctx.deps.limiter, ctx.localLimiter), tokenAdmission: undefined } };
  registerOperation(app, TOKEN_API.revokeRtcToken, async (req, reply, input) => {
    const cred = await authenticateTokenCaller(revokeCtx, req);
    return reply.code(200).send(await revokeByHandle(revokeCtx.deps, cred.projectId, input.body().revocation_handle));
  }, { onRequest: tokenApiGate(revokeCtx), onResponse: countRevocation(ctx.metrics) });
}

function countRevocation(metrics: TokenMetrics | undefined): onResponseHookHandler | undefined {
  if (!metrics) return undefined;
  return (_req, reply, done) => {
    if (reply.statusCode === 200) metrics.revoked();
    done();
  };
}
