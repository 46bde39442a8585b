import { useEffect, useState } from 'preact/hooks';
import type { Credential, CredentialList, CredentialScope, CredentialWithSecret } from '@rtc/protocol';
import { api } from '../api.ts';
import { EditPanel, EmptyState, ErrorText, Field, formatTime, useAction, useConfirm } from '../ui.tsx';

interface Draft {
  name: string;
  scopes: CredentialScope[];
  allowlist: string;
  ttl: string;
}

const emptyDraft: Draft = { name: '', scopes: ['publisher', 'subscriber'], allowlist: '', ttl: '3600' };

function bodyOf(draft: Draft): Record<string, unknown> {
  return {
    name: draft.name,
    scopes: draft.scopes,
    ip_allowlist: draft.allowlist.split(/[\s,]+/).filter(Boolean),
    max_ttl_seconds: Number(draft.ttl),
  };
}

function CredentialForm(props: { draft: Draft; submit: string; busy: boolean; onChange: (d: Draft) => void; onSubmit: () => void }) {
  const { draft, onChange } = props;
  const toggle = (scope: CredentialScope, on: boolean): void => onChange({ ...draft, scopes: on ? [...draft.scopes, scope] : draft.scopes.filter((s) => s !== scope) });
  return (
    <form onSubmit={(e) => { e.preventDefault(); props.onSubmit(); }}>
      <Field label="Name"><input required maxLength={100} value={draft.name} onInput={(e) => onChange({ ...draft, name: e.currentTarget.value })} /></Field>
      <fieldset>
        <legend>Scopes</legend>
        {(['publisher', 'subscriber'] as const).map((scope) => (
          <label key={scope} class="check"><input type="checkbox" checked={draft.scopes.includes(scope)}
            onChange={(e) => toggle(scope, e.currentTarget.checked)} /> {scope}</label>
        ))}
      </fieldset>
      <Field label="IP allowlist" hint="Addresses or CIDR ranges, separated by spaces or commas; empty: any address.">
        <textarea rows={2} value={draft.allowlist} onInput={(e) => onChange({ ...draft, allowlist: e.currentTarget.value })} />
      </Field>
      <Field label="Token lifetime limit (seconds)"><input type="number" min={1} max={3600} required value={draft.ttl}
        onInput={(e) => onChange({ ...draft, ttl: e.currentTarget.value })} /></Field>
      <button type="submit" disabled={props.busy}>{props.submit}</button>
    </form>
  );
}

/** The App Secret, shown once, with a copy button and what to do with it. */
function SecretNotice({ credential, onDone }: { credential: CredentialWithSecret; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret" role="alertdialog" aria-labelledby="secret-title" aria-describedby="secret-warning">
      <h2 id="secret-title">App Secret of {credential.name}</h2>
      <p id="secret-warning"><strong>Copy it now: it is shown only this once.</strong> Keep it in your server's secret store,
        never in an app or a web page. Anyone with it can issue tokens for this project.</p>
      <p><span class="label">App ID</span> <code data-testid="app-id">{credential.app_id}</code></p>
      <p><span class="label">App Secret</span> <code data-testid="app-secret">{credential.app_secret}</code></p>
      <button type="button" onClick={() => void navigator.clipboard.writeText(credential.app_secret).then(() => setCopied(true))}>
        {copied ? 'Copied' : 'Copy App Secret'}
      </button>
      <button type="button" onClick={onDone}>I have stored it</button>
    </div>
  );
}

export function CredentialsSection({ projectId }: { projectId: string }) {
  const [credentials, setCredentials] = useState<readonly Credential[]>([]);
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  const [editing, setEditing] = useState<{ appId: string; draft: Draft } | undefined>(undefined);
  const [secret, setSecret] = useState<CredentialWithSecret | undefined>(undefined);
  const action = useAction();
  const confirm = useConfirm();
  const [loaded, setLoaded] = useState(false);
  const [creating, setCreating] = useState(false);
  const base = `/v1/projects/${projectId}/credentials`;
  const reload = async (): Promise<void> => {
    setCredentials((await api<CredentialList>('GET', base)).credentials);
    setLoaded(true);
  };
  useEffect(() => void action.run(reload), [projectId]);
  return (
    <section aria-labelledby="credentials-title">
      <h1 id="credentials-title">Credentials</h1>
      <p class="lead">An App ID and App Secret let your server ask the token API for tokens. Keep one per service, rotate a
        secret that may have leaked, revoke what you no longer use.</p>
      {secret && <SecretNotice credential={secret} onDone={() => setSecret(undefined)} />}
      <ErrorText error={action.error} />
      {confirm.dialog}
      {loaded && credentials.length === 0 && (
        <EmptyState title="No credential yet">
          <p>Create one to get the App ID and App Secret your server asks for tokens with.</p>
          <button type="button" onClick={() => setCreating(true)}>Create your first credential</button>
        </EmptyState>
      )}
      {credentials.length > 0 && <table>
        <thead><tr><th scope="col">Name</th><th scope="col">App ID</th><th scope="col">Scopes</th><th scope="col">Status</th><th scope="col">Actions</th></tr></thead>
        <tbody>
          {credentials.map((c) => (
            <tr key={c.app_id}>
              <td>{c.name}</td>
              <td><code>{c.app_id}</code></td>
              <td>{c.scopes.join(', ')}</td>
              <td>{c.status}{c.rotated_at !== null && <small> · rotated {formatTime(c.rotated_at)}</small>}</td>
              <td class="actions">
                {c.status === 'active' && <>
                  <button type="button" aria-label={`Edit ${c.name}`} onClick={() => setEditing({
                    appId: c.app_id, draft: { name: c.name, scopes: [...c.scopes], allowlist: c.ip_allowlist.join(' '), ttl: String(c.max_ttl_seconds) },
                  })}>Edit</button>
                  <button type="button" aria-label={`Rotate ${c.name}`} disabled={action.busy} onClick={() => confirm.ask({
                    title: `Rotate the App Secret of ${c.name}?`, confirm: 'Rotate secret', danger: true,
                    message: <p>The current App Secret stops working at once: servers still using it get 401 until they
                      have the new one, which is shown once.</p>,
                    onConfirm: async () => {
                      setSecret(await api<CredentialWithSecret>('POST', `${base}/${c.app_id}/rotate`));
                      await reload();
                    },
                  })}>Rotate</button>
                  <button type="button" class="danger" aria-label={`Revoke ${c.name}`} disabled={action.busy} onClick={() => confirm.ask({
                    title: `Revoke ${c.name}?`, confirm: 'Revoke credential', danger: true,
                    message: <p>Its App Secret stops working at once, for good: this cannot be undone.</p>,
                    onConfirm: async () => {
                      await api('POST', `${base}/${c.app_id}/revoke`);
                      await reload();
                    },
                  })}>Revoke</button>
                </>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>}
      {editing && (
        <EditPanel title="Edit credential" level={3} onCancel={() => setEditing(undefined)}>
          <CredentialForm draft={editing.draft} submit="Save changes" busy={action.busy} onChange={(d) => setEditing({ ...editing, draft: d })}
            onSubmit={() => void action.run(async () => {
              await api('PATCH', `${base}/${editing.appId}`, bodyOf(editing.draft));
              setEditing(undefined);
              await reload();
            })} />
        </EditPanel>
      )}
      <details class="panel" open={creating} onToggle={(e) => setCreating(e.currentTarget.open)}>
        <summary>New credential</summary>
        <CredentialForm draft={draft} submit="Create credential" busy={action.busy} onChange={setDraft} onSubmit={() => void action.run(async () => {
          setSecret(await api<CredentialWithSecret>('POST', base, bodyOf(draft)));
          setDraft(emptyDraft);
          await reload();
        })} />
      </details>
    </section>
  );
}
