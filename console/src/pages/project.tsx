import { useEffect, useState } from 'preact/hooks';
import type { Project } from '@rtc/protocol';
import { api } from '../api.ts';
import { ErrorText, Field, useAction } from '../ui.tsx';
import { CredentialsSection } from './credentials.tsx';
import { TestRoom } from './test-room.tsx';
import { UsageSection } from './usage.tsx';

export function ProjectPage({ id }: { id: string }) {
  const [project, setProject] = useState<Project | undefined>(undefined);
  const [name, setName] = useState('');
  const load = useAction();
  const change = useAction();
  useEffect(() => void load.run(async () => {
    const p = await api<Project>('GET', `/v1/projects/${id}`);
    setProject(p);
    setName(p.name);
  }), [id]);
  if (!project) return <section><p>Loading…</p><ErrorText error={load.error} /></section>;
  const archive = (archived: boolean): Promise<void> => change.run(async () => {
    setProject(await api<Project>('POST', `/v1/projects/${id}/${archived ? 'archive' : 'unarchive'}`));
  });
  return (
    <section>
      <p><a href="#/projects">← Projects</a></p>
      <h1>{project.name} {project.archived && <span class="badge">archived</span>}</h1>
      <p><small>{project.id}</small></p>
      <form class="inline" onSubmit={(e) => {
        e.preventDefault();
        void change.run(async () => setProject(await api<Project>('PATCH', `/v1/projects/${id}`, { name })));
      }}>
        <Field label="Project name"><input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} /></Field>
        <button type="submit" disabled={change.busy}>Rename</button>
        {project.archived
          ? <button type="button" disabled={change.busy} onClick={() => void archive(false)}>Unarchive project</button>
          : <button type="button" class="danger" disabled={change.busy} onClick={() => {
            if (confirm('Archive this project? Its credentials stop working at once.')) void archive(true);
          }}>Archive project</button>}
      </form>
      <ErrorText error={change.error} />
      {project.archived && <p role="status">This project is archived: its credentials and test tokens are refused until you unarchive it.</p>}
      <CredentialsSection projectId={id} />
      <TestRoom projectId={id} archived={project.archived} />
      <UsageSection projectId={id} />
    </section>
  );
}
