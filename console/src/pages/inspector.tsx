import { useEffect, useState } from 'preact/hooks';
import { decodeJwsSegment, GRANT_TYPE, jwksKeyLookup, SIGNALING_TOKEN_TYPE, verifyJws, type JwsFailure, type JwsKeyLookup } from '@rtc/protocol';
import { publicApi } from '../api.ts';
import { ErrorText, formatTime } from '../ui.tsx';

interface Inspection {
  readonly header: Record<string, unknown>;
  readonly claims: Record<string, unknown>;
  readonly verified: boolean;
  readonly why: string;
}

const WHY: Readonly<Record<JwsFailure, string>> = {
  malformed: 'not a compact JWS in strict base64url, or too long',
  wrong_type: 'not a media grant or signaling token',
  unknown_key: 'no such key in the JWKS',
  bad_signature: 'the signature does not match',
};

/** Decodes a media grant (a compact JWS, not secret) and checks its Ed25519 signature against the platform's JWKS, here in the page. */
async function inspect(grant: string, keys: JwsKeyLookup): Promise<Inspection> {
  const token = grant.trim();
  const parts = token.split('.');
  if (parts.length !== 3) throw new Error('A grant has three parts separated by dots.');
  const [h, p] = parts as [string, string, string];
  const header = decodeJwsSegment(h);
  const claims = decodeJwsSegment(p);
  if (!header || !claims) throw new Error('not a JSON object');
  if (header['alg'] !== 'EdDSA') return { header, claims, verified: false, why: `unexpected algorithm ${String(header['alg'])}` };
  const kid = header['kid'];
  if (typeof kid !== 'string' || !(await keys(kid))) return { header, claims, verified: false, why: `no key ${String(kid)} in the JWKS` };
  const result = await verifyJws(token, keys, [GRANT_TYPE, SIGNALING_TOKEN_TYPE]);
  return { header, claims, verified: result.ok, why: result.ok ? `signed by ${kid}` : WHY[result.reason] };
}

export function InspectorPage() {
  const [grant, setGrant] = useState('');
  const [keys, setKeys] = useState<JwsKeyLookup>(() => jwksKeyLookup({ keys: [] }));
  const [result, setResult] = useState<Inspection | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => void publicApi<unknown>('/.well-known/jwks.json').then((jwks) => setKeys(() => jwksKeyLookup(jwks)), setError), []);
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
