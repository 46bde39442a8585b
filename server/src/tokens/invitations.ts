/**
 * Test-room invitations (docs/console.md, "Test room"; docs/decisions.md, "Test-room share links"):
 * the console asks for one for a room of a project of the account, puts it in a link, and the page
 * that opens the link trades it, once, for a temporary token of its own. The invitation is no
 * secret of the project: it names one room, lives ten minutes, works once, and holds neither the
 * App Secret nor a media key.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { TokenResponse } from '@rtc/protocol';
import { z } from 'zod';
import { ApiError, rateLimited } from '../core/errors.ts';
import { nowSec, type ServiceDeps } from '../core/deps.ts';
import { newOpaqueId } from '../core/ids.ts';
import type { IssuerSettings } from '../http/context.ts';
import { epochSeconds, responseComponent } from '../http/registry.ts';
import { getOwnProject } from '../customers/projects.ts';
import type { ProjectStore } from '../customers/store.ts';
import { issueToken } from './issue.ts';
import { opaqueId, streamList } from './schemas.ts';
import { TEMPORARY_TOKEN_MAX_TTL_SECONDS } from './temporary.ts';

export const INVITATION_TTL_SECONDS = 600;
const INVITATIONS_PER_MINUTE = 20;
const REDEMPTIONS_PER_MINUTE = 30;
const PREFIX = 'inv_';
const MAX_INVITATION_LENGTH = 512;

export const invitationCreateSchema = z.strictObject({ room_id: opaqueId('room_id') });
export const invitationRedeemSchema = z.strictObject({
  invitation: z.string({ error: 'invitation must be a string' }).max(MAX_INVITATION_LENGTH, { error: 'invitation is too long' }),
  user_id: opaqueId('user_id'),
  publish_streams: streamList('publish_streams', 2).optional(),
});

export const invitationSchema = responseComponent(z.strictObject({
  invitation: z.string().meta({ description: 'inv_…: works once, until expires_at; put it in the link\'s fragment' }),
  room_id: z.string(),
  expires_at: epochSeconds,
}), 'Invitation');

export type Invitation = z.infer<typeof invitationSchema>;

interface Claims {
  /** account, project, room, expiry (seconds), nonce */
  readonly a: string;
  readonly p: string;
  readonly r: string;
  readonly e: number;
  readonly n: string;
}

function sign(deps: ServiceDeps<ProjectStore>, payload: string): Buffer {
  return createHmac('sha256', deps.keys.secretHashKey).update(`invitation:${payload}`).digest();
}

const refused = (): ApiError => new ApiError('unauthenticated', 'the invitation is invalid, expired or already used');

/** Issues an invitation to a room of a project of the account; counted with the account's temporary tokens. */
export async function createInvitation(
  deps: ServiceDeps<ProjectStore>, accountId: string, projectId: string, roomId: string,
): Promise<Invitation> {
  const project = await getOwnProject(deps, accountId, projectId);
  const rate = await deps.limiter.hit(`invitation:${accountId}`, INVITATIONS_PER_MINUTE, 60);
  if (!rate.ok) throw rateLimited(rate.retryAfterSec);
  if (project.archivedAt !== null) throw new ApiError('project_archived', 'the project is archived');
  const claims: Claims = { a: accountId, p: project.id, r: roomId, e: nowSec(deps.clock) + INVITATION_TTL_SECONDS, n: newOpaqueId() };
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return { invitation: `${PREFIX}${payload}.${sign(deps, payload).toString('base64url')}`, room_id: roomId, expires_at: claims.e };
}

function readClaims(deps: ServiceDeps<ProjectStore>, invitation: string): Claims {
  if (!invitation.startsWith(PREFIX)) throw refused();
  const [payload, mac, ...rest] = invitation.slice(PREFIX.length).split('.');
  if (payload === undefined || mac === undefined || rest.length > 0) throw refused();
  const given = Buffer.from(mac, 'base64url');
  const expected = sign(deps, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refused();
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Claims;
  if (claims.e < nowSec(deps.clock)) throw refused();
  return claims;
}

/**
 * Trades an invitation for a temporary token (speaker, the whole room, at most ten minutes), once:
 * the nonce is claimed in the shared limiter (Redis in a cluster) for the invitation's lifetime.
 */
export async function redeemInvitation(
  deps: ServiceDeps<ProjectStore>, settings: IssuerSettings, address: string,
  body: { readonly invitation: string; readonly user_id: string; readonly publish_streams?: readonly number[] | undefined },
): Promise<TokenResponse> {
  const rate = await deps.limiter.hit(`invitation-redeem:${address}`, REDEMPTIONS_PER_MINUTE, 60);
  if (!rate.ok) throw rateLimited(rate.retryAfterSec);
  const claims = readClaims(deps, body.invitation);
  const project = await deps.store.getProject(claims.a, claims.p);
  if (!project) throw refused();
  if (project.archivedAt !== null) throw new ApiError('project_archived', 'the project is archived');
  const once = await deps.limiter.hit(`invitation-used:${claims.n}`, 1, INVITATION_TTL_SECONDS + 60);
  if (!once.ok) throw refused();
  return issueToken(deps, settings, {
    projectId: project.id, appId: project.consoleAppId, publisher: true, subscriber: true,
    maxTtlSeconds: TEMPORARY_TOKEN_MAX_TTL_SECONDS,
  }, {
    room_id: claims.r, user_id: body.user_id, role: 'speaker', publish_streams: [...(body.publish_streams ?? [])],
    subscribe_room: true, ttl_seconds: TEMPORARY_TOKEN_MAX_TTL_SECONDS,
  });
}
