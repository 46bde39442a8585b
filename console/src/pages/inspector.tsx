import { useEffect, useState } from 'preact/hooks';
import { publicApi } from '../api.ts';
import { ErrorText, formatTime } from '../ui.tsx';

interface Jwk {
  readonly kid: string;
  readonly kty: string;
  readonly crv: string;
  readonly x: string;
}

interface Inspection {
  readonly header: Record<string, unknown>;
  readonly claims: Record<string, unknown>;
  readonly verified: boolean;
  readonly why: string;
}

function b64url(text: string): Uint8Array<ArrayBuffer> {
  const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  const raw = atob(padded);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

function json(part: string): Record<string, unknown> {
  const value: unknown = JSON.parse(new TextDecoder().decode(b64url(part)));
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
  return value as Record<string, unknown>;
}

/** Decodes a media grant (a compact JWS, not secret) and checks its Ed25519 signature against the platform's JWKS, here in the page. */
async function inspect(grant: string, keys: readonly Jwk[]): Promise<Inspection> {
  const parts = grant.trim().split('.');
  if (parts.length !== 3) throw new Error('A grant has three parts separated by dots.');
  const [h, p, s] = parts as [string, string, string];
  const header = json(h);
  const claims = json(p);
  const jwk = keys.find((k) => k.kid === header['kid']);
  if (header['alg'] !== 'EdDSA') return { header, claims, verified: false, why: `unexpected algorithm ${String(header['alg'])}` };
  if (!jwk) return { header, claims, verified: false, why: `no key ${String(header['kid'])} in the JWKS` };
  const key = await crypto.subtle.importKey('jwk', { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, { name: 'Ed25519' }, false, ['verify']);
  const ok = await crypto.subtle.verify({ name: 'Ed25519' }, key, b64url(s), new TextEncoder().encode(`${h}.${p}`));
  return { header, claims, verified: ok, why: ok ? `signed by ${jwk.kid}` : 'the signature does not match' };
}

export function InspectorPage() {
  const [grant, setGrant] = useState('');
  const [keys, setKeys] = useState<readonly Jwk[]>([]);
  const [result, setResult] = useState<Inspection | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => void publicApi<{ keys: Jwk[] }>('/.well-known/jwks.json').then((j) => setKeys(j.keys), setError), []);
  useEffect(() => {
    setResult(undefined);
    setError(undefined);
    if (grant.trim() === '') return;
    // a slower check of an earlier grant must not overwrite this one's verdict
    let current = true;
    inspect(grant, keys).then((r) => current && setResult(r), (e: unknown) => current && setError(e));
    return () => {
      current = false;
    };
  }, [grant, keys]);
  const c = result?.claims;
  const now = Date.now() / 1000;
  const exp = typeof c?.['exp'] === 'number' ? c['exp'] : undefined;
  return (
    <section>
      <h1>Grant inspector</h1>
      <p>Paste a media grant (<code>media.grant</code> of a token response: it is signed, not secret; never paste the media key).</p>
      <label class="field"><span>Media grant</span>
        <textarea rows={5} value={grant} onInput={(e) => setGrant(e.currentTarget.value)} spellcheck={false} />
      </label>
      <ErrorText error={error} />
      {result && c && (
        <div class="panel" aria-live="polite">
          <p data-testid="verdict" class={result.verified ? 'ok' : 'error'}>{result.verified ? 'Valid signature' : 'Not valid'}: {result.why}</p>
          <dl>
            <dt>Room</dt><dd>{String(c['room'])}</dd>
            <dt>User</dt><dd>{String(c['sub'])}</dd>
            <dt>Role</dt><dd>{String(c['role'])}</dd>
            <dt>Publishes</dt><dd>{JSON.stringify(c['pub'])}</dd>
            <dt>Receives</dt><dd>{c['sub_room'] === true ? 'the whole room' : JSON.stringify(c['subs'])}</dd>
            <dt>Project / App</dt><dd>{String(c['prj'])} / {String(c['app'])}</dd>
            {typeof c['iat'] === 'number' && <><dt>Issued</dt><dd>{formatTime(c['iat'])}</dd></>}
            {exp !== undefined && <><dt>Expires</dt><dd>{formatTime(exp)} ({exp > now ? `in ${Math.round(exp - now)} s` : 'expired'})</dd></>}
          </dl>
          <details><summary>Raw header and claims</summary><pre>{JSON.stringify({ header: result.header, claims: c }, null, 2)}</pre></details>
        </div>
      )}
    </section>
  );
}
