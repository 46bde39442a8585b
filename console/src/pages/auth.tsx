import { useState } from 'preact/hooks';
import { signIn } from '../api.ts';
import { ErrorText, Field, useAction } from '../ui.tsx';

export function AuthPage({ kind }: { kind: 'login' | 'register' }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useAction();
  const title = kind === 'register' ? 'Create your account' : 'Sign in';
  return (
    <section class="narrow">
      <h1>{title}</h1>
      <form onSubmit={(e) => {
        e.preventDefault();
        void run(async () => {
          await signIn(kind, email, password);
          location.hash = '#/projects';
        });
      }}>
        <Field label="E-mail"><input type="email" required autoComplete="email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} /></Field>
        <Field label="Password" hint={kind === 'register' ? 'At least 12 characters.' : undefined}>
          <input type="password" required autoComplete={kind === 'register' ? 'new-password' : 'current-password'} value={password}
            onInput={(e) => setPassword(e.currentTarget.value)} />
        </Field>
        <ErrorText error={error} />
        <button type="submit" disabled={busy}>{kind === 'register' ? 'Create account' : 'Sign in'}</button>
      </form>
      <p>{kind === 'register' ? <>Have an account? <a href="#/signin">Sign in</a></> : <>New here? <a href="#/signup">Create an account</a></>}</p>
    </section>
  );
}
