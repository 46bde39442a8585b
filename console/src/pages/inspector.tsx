import { useEffect, useState } from 'preact/hooks';
import { decodeJwsSegment, GRANT_TYPE, jwksKeyLookup, SIGNALING_TOKEN_TYPE, verifyJws, type JwsFailure, type JwsKeyLookup } from '@rtc/protocol';
import { publicApi } from '../api.ts';
import { ErrorText, formatTime } from '../ui.tsx';

interface Decoded {
  readonly header: Record<string, unknown>;
  readonly claims: Record<string, unknown>;
}

/** The signature's verdict: checking while the keys are on their way, could-not-check when they did not come. */
type Verdict =
  | { readonly state: 'checking' }
  | { readonly state: 'unchecked'; readonly why: string }
  | { readonly state: 'valid'; readonly why: string }
  | { readonly state: 'invalid'; readonly why: string };

type Keys = { readonly state: 'loading' } | { readonly state: 'failed'; readonly why: string } | { readonly state: 'ready'; readonly lookup: JwsKeyLookup };

const WHY: Readonly<Record<JwsFailure, string>> = {
  malformed: 'not a compact JWS in strict base64url, or too long',
  wrong_type: 'not a media grant or signaling token',
  unknown_key: 'no such key in the JWKS',
  bad_signature: 'the signature does not match',
};

const NOT_A_GRANT = 'This is not a media grant: a grant is three base64url parts separated by dots (header.claims.signature), '
  + 'as in media.grant of a token response.';

/** A grant handed over by another page (the overview's test token), taken once by the inspector. */
let handedOver: string | undefined;

export function openInInspector(grant: string): void {
  handedOver = grant;
}

/** Decodes a media grant (a compact JWS, not secret) without checking it; a clear message for anything else. */
function decode(grant: string): Decoded {
  const parts = grant.trim().split('.');
  if (parts.length !== 3) throw new Error(NOT_A_GRANT);
  const header = decodeJwsSegment(parts[0]!);
  const claims = decodeJwsSegment(parts[1]!);
  if (!header || !claims) throw new Error(NOT_A_GRANT);
  return { header, claims };
}

/** Checks the Ed25519 signature against the platform's JWKS, here in the page. */
async function check(grant: string, decoded: Decoded, keys: JwsKeyLookup): Promise<Verdict> {
  if (decoded.header['alg'] !== 'EdDSA') return { state: 'invalid', why: `unexpected algorithm ${String(decoded.header['alg'])}` };
  const result = await verifyJws(grant.trim(), keys, [GRANT_TYPE, SIGNALING_TOKEN_TYPE]);
  if (result.ok) return { state: 'valid', why: `signed by ${String(decoded.header['kid'])}` };
  return { state: 'invalid', why: result.reason === 'unknown_key' ? `no key ${String(decoded.header['kid'])} in the JWKS` : WHY[result.reason] };
}

const VERDICT_TEXT: Readonly<Record<Verdict['state'], string>> = {
  checking: 'Checking the signature…',
  unchecked: 'Could not check the signature',
  valid: 'Valid signature',
  invalid: 'Not valid',
};

export function InspectorPage() {
  const [grant, setGrant] = useState(() => {
    const given = handedOver ?? '';
    handedOver = undefined;
    return given;
  });
  const [keys, setKeys] = useState<Keys>({ state: 'loading' });
  const [verdict, setVerdict] = useState<Verdict>({ state: 'checking' });
  useEffect(() => void publicApi<unknown>('/.well-known/jwks.json').then(
    (jwks) => setKeys({ state: 'ready', lookup: jwksKeyLookup(jwks) }),
    (e: unknown) => setKeys({ state: 'failed', why: e instanceof Error ? e.message : String(e) }),
  ), []);
  let decoded: Decoded | undefined;
  let error: unknown;
  if (grant.trim() !== '') {
    try {
      decoded = decode(grant);
    } catch (e) {
      error = e;
    }
  }
  useEffect(() => {
    setVerdict({ state: 'checking' });
    if (!decoded) return;
    if (keys.state === 'loading') return;
    if (keys.state === 'failed') {
      setVerdict({ state: 'unchecked', why: `the signing keys could not be fetched (${keys.why})` });
      return;
    }
    // a slower check of an earlier grant must not overwrite this one's verdict
    let current = true;
    check(grant, decoded, keys.lookup).then((v) => current && setVerdict(v), (e: unknown) => current && setVerdict({ state: 'unchecked', why: String(e) }));
    return () => {
      current = false;
    };
  }, [grant, keys]);
  const c = decoded?.claims;
  const now = Date.now() / 1000;
  const exp = typeof c?.['exp'] === 'number' ? c['exp'] : undefined;
  const cls = verdict.state === 'valid' ? 'ok' : verdict.state === 'invalid' ? 'error' : 'pending';
  return (
    <section aria-labelledby="inspector-title">
      <h1 id="inspector-title">Grant inspector</h1>
      <p class="lead">Paste a media grant (<code>media.grant</code> of a token response: it is signed, not secret; never paste the
        media key). The page decodes it and checks its signature against the platform's published keys.</p>
      <label class="field"><span>Media grant</span>
        <textarea rows={5} value={grant} onInput={(e) => setGrant(e.currentTarget.value)} spellcheck={false} />
      </label>
      <ErrorText error={error} />
      {decoded && c && (
        <div class="panel" aria-live="polite">
          <p data-testid="verdict" class={cls}>{VERDICT_TEXT[verdict.state]}{verdict.state === 'checking' ? '' : `: ${verdict.why}`}</p>
          <dl class="claims">
            <dt>Room</dt><dd>{String(c['room'])}</dd>
            <dt>User</dt><dd>{String(c['sub'])}</dd>
            <dt>Role</dt><dd>{String(c['role'])}</dd>
            <dt>Publishes</dt><dd>{JSON.stringify(c['pub'])}</dd>
            <dt>Receives</dt><dd>{c['sub_room'] === true ? 'the whole room' : JSON.stringify(c['subs'])}</dd>
            <dt>Project / App</dt><dd>{String(c['prj'])} / {String(c['app'])}</dd>
            {typeof c['jti'] === 'string' && <><dt>Grant id</dt><dd>{c['jti']}</dd></>}
            {typeof c['iat'] === 'number' && <><dt>Issued</dt><dd>{formatTime(c['iat'])}</dd></>}
            {exp !== undefined && <><dt>Expires</dt><dd>{formatTime(exp)} ({exp > now ? `in ${Math.round(exp - now)} s` : 'expired'})</dd></>}
          </dl>
          <details><summary>Raw header and claims</summary><pre tabIndex={0}>{JSON.stringify({ header: decoded.header, claims: c }, null, 2)}</pre></details>
        </div>
      )}
    </section>
  );
}
