/**
 * Test-room invitations (docs/console.md, "Share links"; docs/decisions/tokens.md, "Test-room share links"):
 * the console asks for one for a room of a project of the account, puts it in a link, and the page
 * that opens the link trades it, once, for a temporary token of its own. The invitation is no
 * secret of the project: it names one room, lives ten minutes, works once, and holds neither the
 * App Secret nor a media key. The guest's identity and stream ids are the platform's choice.
 */
import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { GUEST_USER_PREFIX, MAX_STREAM_ID, TEMPORARY_TOKEN_MAX_TTL_SECONDS, type TokenResponse } from '@rtc/protocol';
import { z } from 'zod';
import { ApiError, rateLimited } from '../core/errors.ts';
import { nowSec, type ServiceDeps } from '../core/deps.ts';
import { newOpaqueId } from '../core/ids.ts';
import type { IssuerSettings } from '../http/context.ts';
import { epochSeconds, responseComponent } from '../http/registry.ts';
import { isCutOff } from '../customers/project-cutoff.ts';
import { getOwnProject } from '../customers/projects.ts';
import type { ProjectStore } from '../customers/store.ts';
import { issueToken } from './issue.ts';
import { opaqueId, streamList } from './schemas.ts';
import type { RedeemedInvitationStore } from './store.ts';

export const INVITATION_TTL_SECONDS = 600;
const INVITATIONS_PER_MINUTE = 20;
const REDEMPTIONS_PER_MINUTE = 30;
const PREFIX = 'inv_';
const MAX_INVITATION_LENGTH = 512;
/** A guest publishes a camera and a microphone. */
const GUEST_STREAMS = 2;
/** How long a redeemed mark outlives its invitation: the clock skew between api processes. */
const REDEEMED_MARK_SKEW_SECONDS = 60;

export const invitationCreateSchema = z.strictObject({ room_id: opaqueId('room_id') });
// docs/decisions/tokens.md, "Share-link guests are who the platform says": user_id and publish_streams
// are still accepted (and checked), then ignored
export const invitationRedeemSchema = z.strictObject({
  invitation: z.string({ error: 'invitation must be a string' }).max(MAX_INVITATION_LENGTH, { error: 'invitation is too long' }),
  user_id: opaqueId('user_id').optional().meta({
    deprecated: true, description: `ignored: the guest's user id is the platform's (${GUEST_USER_PREFIX}…, in the token response)`,
  }),
  publish_streams: streamList('publish_streams', GUEST_STREAMS).optional().meta({
    deprecated: true, description: 'ignored: the guest\'s two stream ids are the platform\'s (in the token response)',
  }),
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
 * Two distinct stream ids (1 to 2^32 - 1) outside `taken`, drawn at random: the ids a guest
 * publishes, clear of those the room's participants may publish (stream ids are room-wide).
 */
export function pickGuestStreams(taken: ReadonlySet<number>, draw: () => number = () => randomInt(1, MAX_STREAM_ID + 1)): number[] {
  const picked: number[] = [];
  while (picked.length < GUEST_STREAMS) {
    const id = draw();
    if (!taken.has(id) && !picked.includes(id)) picked.push(id);
  }
  return picked;
}

/** The stream ids the participants of a room may publish now (the room module knows them). */
export type RoomStreams = (projectId: string, roomId: string) => Promise<Iterable<number>>;

/**
 * Trades an invitation for a temporary token (speaker, the whole room, at most ten minutes), once.
 * The guest is `guest_` and 22 random characters, a user id no other token may name, and publishes
 * two stream ids that no participant of the room may publish now: it can neither take a
 * participant's place nor its streams. An invitation made at or before the project's archive
 * cut-off stays refused after an unarchive, as the tokens of then are. The one use is a row of the
 * store (insert once), so it holds across restarts and api processes; a claim whose token could not
 * be issued is released, so that the guest's retry can use the link.
 */
export async function redeemInvitation(
  deps: ServiceDeps<ProjectStore & RedeemedInvitationStore>, settings: IssuerSettings, address: string, invitation: string,
  roomStreams: RoomStreams,
): Promise<TokenResponse> {
  const rate = await deps.limiter.hit(`invitation-redeem:${address}`, REDEMPTIONS_PER_MINUTE, 60);
  if (!rate.ok) throw rateLimited(rate.retryAfterSec);
  const claims = readClaims(deps, invitation);
  const project = await deps.store.getProject(claims.a, claims.p);
  if (!project) throw refused();
  if (project.archivedAt !== null) throw new ApiError('project_archived', 'the project is archived');
  // docs/decisions/customers.md, "Archiving ends live sessions": made (ten minutes before its expiry) at or before the cut-off
  if (isCutOff((await deps.store.projectCutoff(project.id))?.cutAt, claims.e - INVITATION_TTL_SECONDS)) throw refused();
  const streams = pickGuestStreams(new Set(await roomStreams(project.id, claims.r)));
  if (!(await deps.store.claimInvitation(claims.n, claims.e + REDEEMED_MARK_SKEW_SECONDS))) throw refused();
  try {
    return await issueToken(deps, settings, {
      projectId: project.id, appId: project.consoleAppId, publisher: true, subscriber: true,
      maxTtlSeconds: TEMPORARY_TOKEN_MAX_TTL_SECONDS,
    }, {
      room_id: claims.r, user_id: `${GUEST_USER_PREFIX}${newOpaqueId()}`, role: 'speaker', publish_streams: streams,
      subscribe_room: true, ttl_seconds: TEMPORARY_TOKEN_MAX_TTL_SECONDS,
    });
  } catch (err) {
    // no token was returned: the one use is not spent (docs/decisions/tokens.md, "An invitation is spent by a token issued")
    await deps.store.releaseInvitation(claims.n);
    throw err;
  }
}
