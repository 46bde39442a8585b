import { useEffect, useState } from 'preact/hooks';
import type { Credential, CredentialList, Project, Role, TokenResponse } from '@rtc/protocol';
import { api } from '../api.ts';
import { navigate } from '../router.ts';
import { CopyButton, EmptyState, ErrorText, Field, Snippet, useAction, useConfirm } from '../ui.tsx';
import { openInInspector } from './inspector.tsx';
import { snippets } from '../snippets.ts';

const ROLES: readonly Role[] = ['host', 'speaker', 'audience'];

/** A temporary token (no App Secret) and its response, with the media key hidden: it is a secret. */
function TestTokenForm({ projectId, archived }: { projectId: string; archived: boolean }) {
  const [room, setRoom] = useState('my-room');
  const [user, setUser] = useState('alice');
  const [role, setRole] = useState<Role>('speaker');
  const [token, setToken] = useState<TokenResponse | undefined>(undefined);
  const action = useAction();
  const shown = token && { ...token, media: { ...token.media, key: '(hidden: the media key is a secret)' } };
  return (
    <section aria-labelledby="test-token-title" class="card">
      <h2 id="test-token-title">Create a test token</h2>
      <p>A temporary token from the console (at most ten minutes, no App Secret), to try the grant inspector or an app.</p>
      <form class="inline" onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => setToken(await api<TokenResponse>('POST', `/v1/projects/${projectId}/temporary-token`, {
          room_id: room, user_id: user, role, ...(role === 'audience' ? {} : { publish_streams: [1, 2] }), subscribe_room: true, ttl_seconds: 600,
        })));
      }}>
        <Field label="Room id"><input required maxLength={128} value={room} onInput={(e) => setRoom(e.currentTarget.value)} /></Field>
        <Field label="User id"><input required maxLength={128} value={user} onInput={(e) => setUser(e.currentTarget.value)} /></Field>
        <Field label="Role">
          <select value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        </Field>
        <button type="submit" disabled={action.busy || archived}>Create test token</button>
      </form>
      <ErrorText error={action.error} />
      {shown && token && (
        <div class="panel">
          <p class="ok" role="status">Token issued for {token.user_id} in {token.room_id}, valid until {new Date(token.expires_at * 1000).toLocaleTimeString()}.</p>
          <p data-testid="test-token-app-id">Its <code>app_id</code>, <code>{token.app_id}</code>, is the console's own credential of
            this project, not one of yours: test tokens never use an App Secret, and rotating or revoking your credentials
            leaves them alone.</p>
          <pre role="region" aria-label="Token response" class="response" tabIndex={0}>{JSON.stringify(shown, null, 2)}</pre>
          <button type="button" onClick={() => {
            openInInspector(token.media.grant);
            navigate(`/projects/${projectId}/inspect`);
          }}>Open in grant inspector</button>
        </div>
      )}
    </section>
  );
}

function ProjectSettings({ project, onChange }: { project: Project; onChange: (p: Project) => void }) {
  const [name, setName] = useState(project.name);
  const change = useAction();
  const confirm = useConfirm();
  const archive = (archived: boolean): Promise<void> => change.run(async () => {
    onChange(await api<Project>('POST', `/v1/projects/${project.id}/${archived ? 'archive' : 'unarchive'}`));
  });
  return (
    <section aria-labelledby="settings-title" class="card">
      <h2 id="settings-title">Project settings</h2>
      <form class="inline" onSubmit={(e) => {
        e.preventDefault();
        void change.run(async () => onChange(await api<Project>('PATCH', `/v1/projects/${project.id}`, { name })));
      }}>
        <Field label="Project name"><input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} /></Field>
        <button type="submit" disabled={change.busy}>Rename</button>
      </form>
      {project.archived
        ? <button type="button" disabled={change.busy} onClick={() => void archive(false)}>Unarchive project</button>
        : <button type="button" class="danger" disabled={change.busy} onClick={() => confirm.ask({
          title: `Archive ${project.name}?`, danger: true, confirm: 'Archive project',
          message: <p>Its credentials stop working at once and every live call of the project ends within about a second.
            Tokens issued until now stay refused after an unarchive.</p>,
          onConfirm: () => archive(true),
        })}>Archive project</button>}
      <ErrorText error={change.error} />
      {project.archived && <p role="status">This project is archived: its credentials and test tokens are refused until you unarchive it.</p>}
      {confirm.dialog}
    </section>
  );
}

/** Getting started: the App ID, the token request as curl and in both SDKs, and a test token. */
export function OverviewPage({ project, onChange }: { project: Project; onChange: (p: Project) => void }) {
  const [credentials, setCredentials] = useState<readonly Credential[] | undefined>(undefined);
  const [appId, setAppId] = useState('');
  const load = useAction();
  useEffect(() => void load.run(async () => {
    const list = (await api<CredentialList>('GET', `/v1/projects/${project.id}/credentials`)).credentials.filter((c) => c.status === 'active');
    setCredentials(list);
    setAppId(list[0]?.app_id ?? '');
  }), [project.id]);
  const code = appId ? snippets(location.origin, appId) : undefined;
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <p class="lead">Your server asks the token API for a token with the App ID and App Secret; your app joins the room with it.</p>
      <ErrorText error={load.error} />
      <section aria-labelledby="start-title" class="card">
        <h2 id="start-title">Getting started</h2>
        {credentials && credentials.length === 0 && (
          <EmptyState title="No credential yet">
            <p>Create a credential to get an App ID and App Secret for your server.</p>
            <a class="button" href={`#/projects/${project.id}/credentials`}>Create a credential</a>
          </EmptyState>
        )}
        {credentials && credentials.length > 0 && (
          <>
            <div class="app-id">
              {credentials.length > 1
                ? <Field label="Credential"><select value={appId} onChange={(e) => setAppId(e.currentTarget.value)}>
                  {credentials.map((c) => <option key={c.app_id} value={c.app_id}>{c.name}</option>)}
                </select></Field>
                : null}
              <p><span class="label">App ID</span> <code data-testid="overview-app-id">{appId}</code> <CopyButton text={appId} label="Copy App ID" /></p>
            </div>
            <p>The App Secret was shown once, when the credential was created or rotated: keep it in your server's secret
              store as <code>RTC_APP_SECRET</code>. It never goes into an app or a web page.</p>
            {code && <>
              <Snippet label="Token request (curl)" code={code.curl} />
              <Snippet label="Server SDK (Node.js)" code={code.server} />
              <Snippet label="App SDK (browser)" code={code.app} />
            </>}
          </>
        )}
      </section>
      <TestTokenForm projectId={project.id} archived={project.archived} />
      <ProjectSettings project={project} onChange={onChange} />
    </section>
  );
}
