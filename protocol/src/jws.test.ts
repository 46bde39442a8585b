import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { describe, it } from 'node:test';
import { decodeBase64url } from './base64url.ts';
import {
  GRANT_TYPE, importEd25519Jwk, jwksKeyLookup, jwsKeyId, SIGNALING_TOKEN_TYPE, verifyJws, type Ed25519PublicJwk, type JwsKeyLookup,
} from './jws.ts';

const b64u = (value: string | Buffer): string => Buffer.from(value).toString('base64url');
const pair = (): { privateKey: KeyObject; jwk: Ed25519PublicJwk } => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, jwk: publicKey.export({ format: 'jwk' }) as Ed25519PublicJwk };
};
const signer = pair();
const impostor = pair();

function jws(header: unknown, claims: unknown, key = signer.privateKey): string {
  const input = `${b64u(JSON.stringify(header))}.${b64u(JSON.stringify(claims))}`;
  return `${input}.${sign(null, Buffer.from(input), key).toString('base64url')}`;
}

const HEADER = { alg: 'EdDSA', typ: GRANT_TYPE, kid: 'k1' };
const CLAIMS = { aud: 'rtc-media', exp: 1 };
const key = await importEd25519Jwk(signer.jwk);
const keys: JwsKeyLookup = (kid) => (kid === 'k1' ? key : undefined);

describe('verifyJws', () => {
  it('returns the header and claims of a valid JWS', async () => {
    assert.deepEqual(await verifyJws(jws(HEADER, CLAIMS), keys, GRANT_TYPE), { ok: true, header: HEADER, claims: CLAIMS });
    assert.equal((await verifyJws(jws(HEADER, CLAIMS), keys, [SIGNALING_TOKEN_TYPE, GRANT_TYPE])).ok, true);
  });

  const token = jws(HEADER, CLAIMS);
  const [h, p, s] = token.split('.') as [string, string, string];
  const cases: [string, () => string, string][] = [
    ['two parts', () => `${h}.${p}`, 'malformed'],
    ['a padded segment', () => `${h}=.${p}.${s}`, 'malformed'],
    ['a non-canonical signature', () => `${h}.${p}.${s.slice(0, -1)}${s.endsWith('B') ? 'C' : 'B'}`, 'malformed'],
    ['a header that is not JSON', () => `${b64u('{')}.${p}.${s}`, 'malformed'],
    ['claims that are an array', () => jws(HEADER, [1]), 'malformed'],
    ['a header behind a byte-order mark', () => `${b64u(`\ufeff${JSON.stringify(HEADER)}`)}.${p}.${s}`, 'malformed'],
    ['a token over the size limit', () => jws(HEADER, { pad: 'x'.repeat(8192) }), 'malformed'],
    ['another type', () => jws({ ...HEADER, typ: SIGNALING_TOKEN_TYPE }, CLAIMS), 'wrong_type'],
    ['another algorithm', () => jws({ ...HEADER, alg: 'ES256' }, CLAIMS), 'wrong_type'],
    ['no kid', () => jws({ alg: 'EdDSA', typ: GRANT_TYPE }, CLAIMS), 'unknown_key'],
    ['an unknown kid', () => jws({ ...HEADER, kid: 'k2' }, CLAIMS), 'unknown_key'],
    ['another key', () => jws(HEADER, CLAIMS, impostor.privateKey), 'bad_signature'],
    ['a tampered payload', () => `${h}.${b64u(JSON.stringify({ ...CLAIMS, exp: 2 }))}.${s}`, 'bad_signature'],
    ['a short signature', () => `${h}.${p}.${s.slice(0, 40)}`, 'bad_signature'],
  ];
  for (const [what, make, reason] of cases) {
    it(`refuses ${what}: ${reason}`, async () => assert.deepEqual(await verifyJws(make(), keys, GRANT_TYPE), { ok: false, reason }));
  }
});

describe('jwksKeyLookup', () => {
  it('imports the key a kid names, once', async () => {
    const lookup = jwksKeyLookup({ keys: [{ ...impostor.jwk, kid: 'k0' }, { ...signer.jwk, kid: 'k1' }] });
    assert.equal((await verifyJws(jws(HEADER, CLAIMS), lookup, GRANT_TYPE)).ok, true);
    assert.equal(await lookup('k1'), await lookup('k1'));
    assert.equal(await lookup('k9'), undefined);
  });

  it('finds nothing in what is not a JWKS', async () => {
    assert.equal(await jwksKeyLookup('nope')('k1'), undefined);
    assert.equal(await jwksKeyLookup({ keys: [{ kty: 'RSA', kid: 'k1' }] })('k1'), undefined);
  });
});

describe('jwsKeyId', () => {
  it('reads the kid of a header, unverified', () => {
    assert.equal(jwsKeyId(jws(HEADER, CLAIMS)), 'k1');
    for (const bad of ['', '.', 'abc', `${b64u('[1]')}.x.y`, `${b64u(JSON.stringify({ kid: 7 }))}.x.y`]) assert.equal(jwsKeyId(bad), undefined, bad);
  });
});

describe('decodeBase64url', () => {
  // the reference: Node's decoder, held to the alphabet, no padding and a canonical last character
  const reference = (text: string): Buffer | undefined => {
    if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
    const bytes = Buffer.from(text, 'base64url');
    return bytes.toString('base64url') === text ? bytes : undefined;
  };

  it('decodes and refuses as the reference does', () => {
    const samples = ['', 'A', 'AA', 'AB', 'AAA', 'AAB', 'QQ', 'QR', 'QUI', 'QUJD', 'QUJD=', 'a+b/', 'a b', 'é', '-_-_'];
    for (let i = 0; i < 500; i++) {
      const text = randomBytes(i % 40).toString('base64url');
      samples.push(text, text.slice(0, -1), `${text.slice(0, -1)}${'AQgw_'[i % 5]}`);
    }
    for (const text of samples) {
      const expected = reference(text);
      const actual = decodeBase64url(text);
      assert.deepEqual(actual && Buffer.from(actual), expected, JSON.stringify(text));
    }
  });
});
