import { TEMPORARY_TOKEN_MAX_TTL_SECONDS, type TokenRequest, type TokenResponse } from '@rtc/protocol';
import { ApiError, rateLimited } from '../core/errors.ts';
import type { ServiceDeps } from '../core/deps.ts';
import type { IssuerSettings } from '../http/context.ts';
import { issueToken } from './issue.ts';
import { getOwnProject } from '../customers/projects.ts';
import type { ProjectStore } from '../customers/store.ts';

const TEMPORARY_TOKENS_PER_MINUTE = 60;

/**
 * A console test token for a project of the account, issued as its console pseudo-credential with
 * both scopes. Checks in order: own project (404), the account's rate (429), archived (403); only
 * then is `readRequest` called, so the request body is read after them.
 */
export async function issueTemporaryToken(
  deps: ServiceDeps<ProjectStore>, settings: IssuerSettings, accountId: string, projectId: string, readRequest: () => TokenRequest,
): Promise<TokenResponse> {
  const project = await getOwnProject(deps, accountId, projectId);
  const rate = await deps.limiter.hit(`temptoken:${accountId}`, TEMPORARY_TOKENS_PER_MINUTE, 60);
  if (!rate.ok) throw rateLimited(rate.retryAfterSec);
  if (project.archivedAt !== null) throw new ApiError('project_archived', 'the project is archived');
  return issueToken(deps, settings, {
    projectId: project.id, appId: project.consoleAppId, publisher: true, subscriber: true,
    maxTtlSeconds: TEMPORARY_TOKEN_MAX_TTL_SECONDS,
  }, readRequest());
}
