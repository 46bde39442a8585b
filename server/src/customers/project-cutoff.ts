import { MAX_TTL_SECONDS } from '@rtc/protocol';
import type { ProjectCutoffRecord } from './store.ts';

/**
 * How long a cut-off outlives its archive: the longest a token issued before it can live, plus
 * the clock skew a media server accepts on `iat` (docs/protocol/media.md).
 */
export const PROJECT_CUTOFF_RETAIN_SECONDS = MAX_TTL_SECONDS + 60;

/** The cut-off of a project archived at `nowSec` (docs/decisions/customers.md, "Archiving ends live sessions"). */
export function projectCutoffAt(projectId: string, nowSec: number): ProjectCutoffRecord {
  return { projectId, cutAt: nowSec, expiresAt: nowSec + PROJECT_CUTOFF_RETAIN_SECONDS };
}

/** A token issued at `issuedAt` (its `iat`) is refused when issued at or before the cut-off. */
export function isCutOff(cutAt: number | undefined, issuedAt: number): boolean {
  return cutAt !== undefined && issuedAt <= cutAt;
}

/**
 * The cut-offs a process has heard of, by project, kept until they expire: the media and
 * signaling roles check tokens against them before asking the store.
 */
export class ProjectCutoffs {
  private readonly byProject = new Map<string, ProjectCutoffRecord>();

  /** Records a cut-off; true when it is new or later than the one known (the caller then ends sessions). */
  add(cutoff: ProjectCutoffRecord): boolean {
    const known = this.byProject.get(cutoff.projectId);
    if (known && known.cutAt >= cutoff.cutAt) return false;
    this.byProject.set(cutoff.projectId, cutoff);
    return true;
  }

  covers(projectId: string, issuedAt: number): boolean {
    return isCutOff(this.byProject.get(projectId)?.cutAt, issuedAt);
  }

  /** Forgets cut-offs that expired before `nowSec` (every token they cover has expired). */
  purge(nowSec: number): void {
    for (const [projectId, cutoff] of this.byProject) if (cutoff.expiresAt < nowSec) this.byProject.delete(projectId);
  }
}
