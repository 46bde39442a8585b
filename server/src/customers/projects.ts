import { ApiError, notFound, rateLimited } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { Project } from '@rtc/protocol';
import { projectCutoffAt } from './project-cutoff.ts';
import type { ProjectRecord } from './store.ts';
import { nowSec, type ServiceDeps } from '../core/deps.ts';
import type { ProjectStore } from './store.ts';

export const MAX_PROJECTS_PER_ACCOUNT = 100;

export type ProjectView = Project;

export const projectView = (p: ProjectRecord): ProjectView => ({
  id: p.id, name: p.name, archived: p.archivedAt !== null, archived_at: p.archivedAt,
  created_at: p.createdAt, updated_at: p.updatedAt,
});

export async function createProject(deps: ServiceDeps<ProjectStore>, accountId: string, name: string): Promise<ProjectRecord> {
  if ((await deps.store.countProjects(accountId)) >= MAX_PROJECTS_PER_ACCOUNT) {
    throw new ApiError('conflict', `an account may hold at most ${MAX_PROJECTS_PER_ACCOUNT} projects`);
  }
  const now = nowSec(deps.clock);
  const project: ProjectRecord = {
    id: newId('project'), accountId, name, consoleAppId: newId('app'), archivedAt: null, createdAt: now, updatedAt: now,
  };
  await deps.store.insertProject(project);
  return project;
}

/** Another account's project is 404, never 403 (docs/decisions/customers.md, "Projects and credentials": existence is not leaked). */
export async function getOwnProject(deps: ServiceDeps<ProjectStore>, accountId: string, projectId: string): Promise<ProjectRecord> {
  const project = await deps.store.getProject(accountId, projectId);
  if (!project) throw notFound('project');
  return project;
}

export async function renameProject(deps: ServiceDeps<ProjectStore>, accountId: string, projectId: string, name: string): Promise<ProjectRecord> {
  await getOwnProject(deps, accountId, projectId);
  const updated = await deps.store.updateProject(projectId, { name, updatedAt: nowSec(deps.clock) });
  if (!updated) throw notFound('project');
  return updated;
}

/**
 * Archiving is idempotent; an archived project's credentials get 403 project_archived at once, and
 * its tokens issued until now are cut off: persisted first, then published so that the media and
 * signaling roles end their sessions (docs/decisions/customers.md, "Archiving ends live sessions").
 */
export async function setArchived(deps: ServiceDeps<ProjectStore>, accountId: string, projectId: string, archived: boolean): Promise<ProjectRecord> {
  const project = await getOwnProject(deps, accountId, projectId);
  if ((project.archivedAt !== null) === archived) return project;
  const now = nowSec(deps.clock);
  // the cut-off before the archive itself: a failure in between leaves the project unarchived, and
  // a retry archives it (the other order could leave an archived project whose tokens still work)
  const cutoff = archived ? projectCutoffAt(projectId, now) : undefined;
  if (cutoff) await deps.store.insertProjectCutoff(cutoff);
  // the token nodes' cached credentials carry the archived state (docs/decisions/scale-out.md, "Credential cache")
  await deps.credentialVersions?.beforeChange(projectId);
  let updated: ProjectRecord | undefined;
  try {
    updated = await deps.store.updateProject(projectId, { archivedAt: archived ? now : null, updatedAt: now });
  } finally {
    await deps.credentialVersions?.afterChange(projectId);
  }
  if (!updated) throw notFound('project');
  if (cutoff) {
    await deps.bus.publish({ type: 'project.archived', ...cutoff });
    await deps.events.record({ projectId, type: 'project.archived', occurredAt: now, data: {} });
  }
  return updated;
}

/** Console calls of the live rooms and usage views, per account (they poll every few seconds per open tab). */
export const CONSOLE_READS_PER_MINUTE = 600;

export async function admitConsoleRead(deps: ServiceDeps<ProjectStore>, accountId: string): Promise<void> {
  const rate = await deps.limiter.hit(`console:${accountId}`, CONSOLE_READS_PER_MINUTE, 60);
  if (!rate.ok) throw rateLimited(rate.retryAfterSec);
}
