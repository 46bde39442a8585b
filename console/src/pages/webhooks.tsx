import { useEffect, useState } from 'preact/hooks';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_HEADERS, type WebhookDelivery, type WebhookDeliveryList } from '@rtc/protocol';
import { api } from '../api.ts';
import { CopyButton, EditPanel, EmptyState, ErrorText, Field, formatTime, useAction, useConfirm } from '../ui.tsx';

interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly description: string;
  readonly event_types: readonly string[];
  readonly enabled: boolean;
  readonly created_at: number;
  readonly previous_secret_expires_at: number | null;
}

interface Draft {
  readonly url: string;
  readonly description: string;
  readonly types: readonly string[];
}

const EMPTY: Draft = { url: '', description: '', types: [] };

function WebhookForm(props: { draft: Draft; submit: string; busy: boolean; onChange: (d: Draft) => void; onSubmit: () => void }) {
  const { draft, onChange } = props;
  return (
    <form onSubmit={(e) => { e.preventDefault(); props.onSubmit(); }}>
      <Field label="Endpoint URL" hint="https:// on your server; private and loopback addresses are refused.">
        <input type="url" required maxLength={2048} placeholder="https://example.com/rtc-webhooks" value={draft.url}
          onInput={(e) => onChange({ ...draft, url: e.currentTarget.value })} />
      </Field>
      <Field label="Description"><input maxLength={200} value={draft.description} onInput={(e) => onChange({ ...draft, description: e.currentTarget.value })} /></Field>
      <fieldset>
        <legend>Events (none ticked: every event)</legend>
        {WEBHOOK_EVENT_TYPES.map((t) => (
          <label key={t} class="check"><input type="checkbox" checked={draft.types.includes(t)} onChange={(e) => onChange({
            ...draft, types: e.currentTarget.checked ? [...draft.types, t] : draft.types.filter((x) => x !== t),
          })} /> {t}</label>
        ))}
      </fieldset>
      <button type="submit" disabled={props.busy}>{props.submit}</button>
    </form>
  );
}

/** The signing secret, shown once after create and rotate. */
function SecretNotice({ secret, onDone }: { secret: { url: string; secret: string }; onDone: () => void }) {
  return (
    <div class="secret" role="alertdialog" aria-labelledby="wh-secret-title" aria-describedby="wh-secret-warning">
      <h2 id="wh-secret-title">Signing secret of {secret.url}</h2>
      <p id="wh-secret-warning"><strong>Copy it now: it is shown only this once.</strong> Your receiver verifies each delivery's
        <code>{WEBHOOK_HEADERS.signature}</code> with it.</p>
      <p><code data-testid="webhook-secret">{secret.secret}</code></p>
      <CopyButton text={secret.secret} label="Copy signing secret" />
      <button type="button" onClick={onDone}>I have stored it</button>
    </div>
  );
}

function DeliveryLog({ base, webhook }: { base: string; webhook: Webhook }) {
  const [deliveries, setDeliveries] = useState<readonly WebhookDelivery[] | undefined>(undefined);
  const load = useAction();
  const reload = (): Promise<void> => load.run(async () => {
    setDeliveries((await api<WebhookDeliveryList>('GET', `${base}/${webhook.id}/deliveries?limit=20`)).deliveries);
  });
  useEffect(() => {
    void reload();
    const timer = setInterval(() => void reload(), 5000);
    return () => clearInterval(timer);
  }, [webhook.id]);
  return (
    <section aria-label={`Delivery log of ${webhook.url}`} class="log">
      <div class="room-head"><h2>Delivery log</h2><button type="button" class="secondary" onClick={() => void reload()}>Refresh</button></div>
      <ErrorText error={load.error} />
      {deliveries && deliveries.length === 0 && <p class="muted">No delivery yet: send a test event to see one.</p>}
      {deliveries && deliveries.length > 0 && (
        <table>
          <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Created</th></tr></thead>
          <tbody>
            {deliveries.map((d) => (
              <tr key={d.id}>
                <td>{d.event_type}<br /><small><code>{d.event_id}</code></small></td>
                <td><span class={`badge ${d.status}`}>{d.status}</span>{d.next_attempt_at !== null && <small> · next {formatTime(d.next_attempt_at)}</small>}</td>
                <td>{d.attempts}</td>
                <td>{d.last_status_code ?? d.last_error ?? '—'}</td>
                <td>{formatTime(d.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** Webhook endpoints of the project (docs/reference/webhooks.md): create, edit, disable, rotate, delete, test, and the delivery log. */
export function WebhooksPage({ projectId, archived }: { projectId: string; archived: boolean }) {
  const base = `/v1/projects/${projectId}/webhooks`;
  const [webhooks, setWebhooks] = useState<readonly Webhook[] | undefined>(undefined);
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [editing, setEditing] = useState<{ id: string; draft: Draft } | undefined>(undefined);
  const [secret, setSecret] = useState<{ url: string; secret: string } | undefined>(undefined);
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const [creating, setCreating] = useState(false);
  const [done, setDone] = useState('');
  const action = useAction();
  const confirm = useConfirm();
  const reload = async (): Promise<void> => setWebhooks((await api<{ webhooks: Webhook[] }>('GET', base)).webhooks);
  useEffect(() => void action.run(reload), [projectId]);
  const shown = webhooks?.find((w) => w.id === selected) ?? webhooks?.[0];
  const body = (d: Draft) => ({ url: d.url, description: d.description, event_types: d.types });

  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      <p class="lead">The project POSTs signed events to your server's endpoints: participants joining and leaving, rooms starting
        and finishing, credentials rotated or revoked.</p>
      {secret && <SecretNotice secret={secret} onDone={() => setSecret(undefined)} />}
      <ErrorText error={action.error} />
      <p role="status">{done}</p>
      {confirm.dialog}
      {webhooks && webhooks.length === 0 && (
        <EmptyState title="No endpoint yet">
          <p>Add the HTTPS address of your server that should receive events.</p>
          <button type="button" disabled={archived} onClick={() => setCreating(true)}>Add your first endpoint</button>
        </EmptyState>
      )}
      {webhooks && webhooks.length > 0 && (
        <table>
          <thead><tr><th scope="col">Endpoint</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Actions</th></tr></thead>
          <tbody>
            {webhooks.map((w) => (
              <tr key={w.id}>
                <td><code>{w.url}</code>{w.description && <><br /><small>{w.description}</small></>}</td>
                <td>{w.event_types.length === 0 ? 'every event' : w.event_types.join(', ')}</td>
                <td>{w.enabled ? 'enabled' : 'disabled'}{w.previous_secret_expires_at !== null && <small> · old secret until {formatTime(w.previous_secret_expires_at)}</small>}</td>
                <td class="actions">
                  <button type="button" class="secondary" aria-label={`Deliveries of ${w.url}`} onClick={() => setSelected(w.id)}>Deliveries</button>
                  <button type="button" class="secondary" aria-label={`Send test event to ${w.url}`} disabled={action.busy} onClick={() => void action.run(async () => {
                    const sent = await api<{ event_id: string }>('POST', `${base}/${w.id}/test`);
                    setSelected(w.id);
                    setDone(`Test event ${sent.event_id} sent to ${w.url}: see the delivery log.`);
                  })}>Send test</button>
                  <button type="button" class="secondary" aria-label={`Edit ${w.url}`} onClick={() => setEditing({
                    id: w.id, draft: { url: w.url, description: w.description, types: [...w.event_types] },
                  })}>Edit</button>
                  <button type="button" class="secondary" aria-label={`${w.enabled ? 'Disable' : 'Enable'} ${w.url}`} disabled={action.busy}
                    onClick={() => void action.run(async () => {
                      await api('PATCH', `${base}/${w.id}`, { enabled: !w.enabled });
                      await reload();
                    })}>{w.enabled ? 'Disable' : 'Enable'}</button>
                  <button type="button" class="secondary" aria-label={`Rotate secret of ${w.url}`} onClick={() => confirm.ask({
                    title: `Rotate the signing secret of ${w.url}?`, confirm: 'Rotate secret',
                    message: <p>A new secret is shown once. For 24 hours deliveries carry signatures with both the old and the new
                      secret: deploy the new one to your receiver within that time.</p>,
                    onConfirm: async () => {
                      const rotated = await api<{ url: string; secret: string }>('POST', `${base}/${w.id}/rotate-secret`);
                      setSecret({ url: rotated.url, secret: rotated.secret });
                      await reload();
                    },
                  })}>Rotate secret</button>
                  <button type="button" class="danger" aria-label={`Delete ${w.url}`} onClick={() => confirm.ask({
                    title: `Delete ${w.url}?`, confirm: 'Delete endpoint', danger: true,
                    message: <p>It gets no more events; its pending deliveries and its delivery log are dropped.</p>,
                    onConfirm: async () => {
                      await api('DELETE', `${base}/${w.id}`);
                      setSelected(undefined);
                      await reload();
                    },
                  })}>Delete</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {editing && (
        <EditPanel title="Edit endpoint" onCancel={() => setEditing(undefined)}>
          <WebhookForm draft={editing.draft} submit="Save endpoint" busy={action.busy} onChange={(d) => setEditing({ ...editing, draft: d })}
            onSubmit={() => void action.run(async () => {
              await api('PATCH', `${base}/${editing.id}`, body(editing.draft));
              setEditing(undefined);
              await reload();
            })} />
        </EditPanel>
      )}
      <details class="panel" open={creating} onToggle={(e) => setCreating(e.currentTarget.open)}>
        <summary>New endpoint</summary>
        <WebhookForm draft={draft} submit="Add endpoint" busy={action.busy || archived} onChange={setDraft} onSubmit={() => void action.run(async () => {
          const created = await api<{ id: string; url: string; secret: string }>('POST', base, body(draft));
          setSecret({ url: created.url, secret: created.secret });
          setDraft(EMPTY);
          setCreating(false);
          setSelected(created.id);
          await reload();
        })} />
      </details>
      {shown && <DeliveryLog key={shown.id} base={base} webhook={shown} />}
    </section>
  );
}
