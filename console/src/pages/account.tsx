import { useEffect, useState } from 'preact/hooks';
import type { Account } from '@rtc/protocol';
import { api, signOut, signOutEverywhere } from '../api.ts';
import { navigate } from '../router.ts';
import { ErrorText, Field, formatTime, useAction, useConfirm } from '../ui.tsx';

/** Who is signed in, a new password, and signing out here or everywhere (docs/reference/token-api.md, "Customer API"). */
export function AccountPage() {
  const [account, setAccount] = useState<Account | undefined>(undefined);
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [changed, setChanged] = useState(false);
  const load = useAction();
  const change = useAction();
  const confirm = useConfirm();
  useEffect(() => void load.run(async () => setAccount(await api<Account>('GET', '/v1/account'))), []);
  return (
    <section aria-labelledby="account-title">
      <h1 id="account-title">Account</h1>
      <ErrorText error={load.error} />
      {account && (
        <dl class="card">
          <dt>Signed in as</dt><dd data-testid="account-email">{account.email}</dd>
          <dt>Account id</dt><dd><code>{account.id}</code></dd>
          <dt>Since</dt><dd>{formatTime(account.created_at)}</dd>
        </dl>
      )}
      <section aria-labelledby="password-title" class="card">
        <h2 id="password-title">Change password</h2>
        <p>Every other tab and device signed in to this account is signed out; this one stays signed in.</p>
        <form class="narrow" onSubmit={(e) => {
          e.preventDefault();
          setChanged(false);
          void change.run(async () => {
            await api('POST', '/v1/account/password', { current_password: current, new_password: next });
            setCurrent('');
            setNext('');
            setChanged(true);
          });
        }}>
          <Field label="Current password"><input type="password" required autoComplete="current-password" value={current}
            onInput={(e) => setCurrent(e.currentTarget.value)} /></Field>
          <Field label="New password" hint="At least 10 characters.">
            <input type="password" required minLength={10} maxLength={256} autoComplete="new-password" value={next}
              onInput={(e) => setNext(e.currentTarget.value)} />
          </Field>
          <ErrorText error={change.error} />
          {changed && <p class="ok" role="status">Password changed. Other sessions were signed out.</p>}
          <button type="submit" disabled={change.busy}>Change password</button>
        </form>
      </section>
      <section aria-labelledby="signout-title" class="card">
        <h2 id="signout-title">Sign out</h2>
        <div class="actions">
          <button type="button" class="secondary" onClick={() => { void signOut(); navigate('/signin'); }}>Sign out of this tab</button>
          <button type="button" class="danger" onClick={() => confirm.ask({
            title: 'Sign out everywhere?', confirm: 'Sign out everywhere', danger: true,
            message: <p>Every tab and device signed in to this account, this one included, must sign in again.</p>,
            onConfirm: async () => {
              await signOutEverywhere();
              navigate('/signin');
            },
          })}>Sign out everywhere</button>
        </div>
        {confirm.dialog}
      </section>
    </section>
  );
}
