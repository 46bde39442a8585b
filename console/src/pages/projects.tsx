import { useEffect, useState } from 'preact/hooks';
import type { Project, ProjectList } from '@rtc/protocol';
import { api } from '../api.ts';
import { EmptyState, ErrorText, Field, formatTime, useAction } from '../ui.tsx';

export function ProjectsPage() {
  const [projects, setProjects] = useState<readonly Project[] | undefined>(undefined);
  const [name, setName] = useState('');
  const load = useAction();
  const create = useAction();
  const reload = (): Promise<void> => load.run(async () => setProjects((await api<ProjectList>('GET', '/v1/projects')).projects));
  useEffect(() => void reload(), []);
  return (
    <section>
      <h1>Projects</h1>
      <form class="inline" onSubmit={(e) => {
        e.preventDefault();
        void create.run(async () => {
          const project = await api<Project>('POST', '/v1/projects', { name });
          setName('');
          location.hash = `#/projects/${project.id}`;
        });
      }}>
        <Field label="New project name"><input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} /></Field>
        <button type="submit" disabled={create.busy}>Create project</button>
      </form>
      <ErrorText error={create.error ?? load.error} />
      {projects && projects.length === 0 && (
        <EmptyState title="No project yet">
          <p>Name your first project above: it gets its own credentials, rooms, webhooks and a test room.</p>
        </EmptyState>
      )}
      <ul class="cards">
        {projects?.map((p) => (
          <li key={p.id}>
            <a class="project-link" href={`#/projects/${p.id}`}>{p.name}</a>
            {p.archived && <span class="badge">archived</span>}
            <small>{p.id} · created {formatTime(p.created_at)}</small>
          </li>
        ))}
      </ul>
    </section>
  );
}
