import { useEffect, useState } from 'preact/hooks';
import type { Project } from '@rtc/protocol';
import { api } from '../api.ts';
import type { ProjectPageId } from '../router.ts';
import { ErrorText, useAction } from '../ui.tsx';
import { CredentialsSection } from './credentials.tsx';
import { InspectorPage } from './inspector.tsx';
import { OverviewPage } from './overview.tsx';
import { RoomsPage } from './rooms.tsx';
import { TestRoom } from './test-room.tsx';
import { UsageSection } from './usage.tsx';
import { WebhooksPage } from './webhooks.tsx';

/**
 * A project's pages. The test room stays mounted (hidden) on the other pages, so a call goes on while
 * the Rooms page shows it, with yourself marked.
 */
export function ProjectPages({ projectId, page }: { projectId: string; page: ProjectPageId }) {
  const [project, setProject] = useState<Project | undefined>(undefined);
  const load = useAction();
  useEffect(() => void load.run(async () => setProject(await api<Project>('GET', `/v1/projects/${projectId}`))), [projectId]);
  if (!project) return <section><p>Loading…</p><ErrorText error={load.error} /></section>;
  return (
    <>
      <p class="crumb"><span class="project-name">{project.name}</span>
        {project.archived && <span class="badge warn">archived</span>}</p>
      {project.archived && page !== '' && <p role="status" class="notice">This project is archived: its credentials and test tokens are refused until you unarchive it (Overview).</p>}
      {page === '' && <OverviewPage project={project} onChange={setProject} />}
      {page === 'credentials' && <CredentialsSection projectId={projectId} />}
      {page === 'rooms' && <RoomsPage projectId={projectId} />}
      {page === 'usage' && <UsageSection projectId={projectId} />}
      {page === 'webhooks' && <WebhooksPage projectId={projectId} archived={project.archived} />}
      {page === 'inspect' && <InspectorPage />}
      <div hidden={page !== 'test-room'}><TestRoom projectId={projectId} archived={project.archived} visible={page === 'test-room'} /></div>
    </>
  );
}
