import { useState } from 'preact/hooks';
import { signIn } from '../api.ts';
import { navigate, returnPath } from '../router.ts';
import { ErrorText, Field, Logo, PRODUCT, useAction } from '../ui.tsx';

/** The API's rule (docs/reference/token-api.md, "Customer API"): passwords are 10-256 characters. */
const MIN_PASSWORD = 10;

export function AuthPage({ kind, query }: { kind: 'login' | 'register'; query: URLSearchParams }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useAction();
  const title = kind === 'register' ? 'Create your account' : 'Sign in';
  const next = query.get('next');
  const keep = next ? `?next=${encodeURIComponent(next)}` : '';
  return (
    <section class="narrow auth">
      <p class="auth-brand"><Logo size={40} /> <span>{PRODUCT}</span></p>
      <h1>{title}</h1>
      {next && kind === 'login' && <p role="status">Your session ended: sign in to go back to where you were.</p>}
      <form onSubmit={(e) => {
        e.preventDefault();
        void run(async () => {
          await signIn(kind, email, password);
          navigate(returnPath(query));
        });
      }}>
        <Field label="E-mail"><input type="email" required autoComplete="email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} /></Field>
        <Field label="Password" hint={kind === 'register' ? `At least ${MIN_PASSWORD} characters.` : undefined}>
          <input type="password" required minLength={kind === 'register' ? MIN_PASSWORD : undefined}
            autoComplete={kind === 'register' ? 'new-password' : 'current-password'} value={password}
            onInput={(e) => setPassword(e.currentTarget.value)} />
        </Field>
        <ErrorText error={error} />
        <button type="submit" disabled={busy}>{kind === 'register' ? 'Create account' : 'Sign in'}</button>
      </form>
      <p>{kind === 'register' ? <>Have an account? <a href={`#/signin${keep}`}>Sign in</a></>
        : <>New here? <a href={`#/signup${keep}`}>Create an account</a></>}</p>
    </section>
  );
}
