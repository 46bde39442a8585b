import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import type { GrantClaims } from '@rtc/protocol';
import { GRANT_TYPE, SIGNALING_TOKEN_TYPE, signJws } from '../core/grant.ts';
import type { SigningKey } from '../core/keyring.ts';
import { verifySignalingToken } from './verify-token.ts';

function key(kid: string): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { kid, privateKey, publicKey, retireAt: undefined };
}

const current = key('k1');
const stranger = key('k2');
const keys = new Map([[current.kid, current]]);
const NOW = 1_700_000_000;

const CLAIMS: GrantClaims = {
  iss: 'rtc-platform', aud: 'rtc-signaling', jti: 'AAECAwQFBgcICQoLDA0ODw', prj: 'prj_x', app: 'app_x', room: 'room-1',
  sub: 'user-1', role: 'speaker', pub: [1], subs: [], sub_room: false, iat: NOW - 10, exp: NOW + 590, cnf: { kid: 'm1' },
};
const expected = { issuer: 'rtc-platform', nowSec: NOW };

describe('verifySignalingToken', () => {
  it('accepts a signaling token and names its session', async () => {
    assert.deepEqual(await verifySignalingToken(signJws(CLAIMS, current, SIGNALING_TOKEN_TYPE), keys, expected), {
      grantId: CLAIMS.jti, projectId: 'prj_x', roomId: 'room-1', userId: 'user-1', role: 'speaker', issuedAt: NOW - 10, expiresAt: NOW + 590,
    });
  });

  const refused: [string, () => string][] = [
    ['a media grant', () => signJws({ ...CLAIMS, aud: 'rtc-media' }, current, GRANT_TYPE)],
    ['media claims under the signaling type', () => signJws({ ...CLAIMS, aud: 'rtc-media' }, current, SIGNALING_TOKEN_TYPE)],
    ['signaling claims under the grant type', () => signJws(CLAIMS, current, GRANT_TYPE)],
    ['an unknown key', () => signJws(CLAIMS, stranger, SIGNALING_TOKEN_TYPE)],
    ['another issuer', () => signJws({ ...CLAIMS, iss: 'elsewhere' }, current, SIGNALING_TOKEN_TYPE)],
    ['an expired token', () => signJws({ ...CLAIMS, exp: NOW }, current, SIGNALING_TOKEN_TYPE)],
    ['an unknown role', () => signJws({ ...CLAIMS, role: 'admin' as GrantClaims['role'] }, current, SIGNALING_TOKEN_TYPE)],
    ['an empty room', () => signJws({ ...CLAIMS, room: '' }, current, SIGNALING_TOKEN_TYPE)],
    ['a fractional expiry', () => signJws({ ...CLAIMS, exp: NOW + 0.5 }, current, SIGNALING_TOKEN_TYPE)],
    ['a tampered payload', () => {
      const [h, , s] = signJws(CLAIMS, current, SIGNALING_TOKEN_TYPE).split('.');
      return `${h}.${Buffer.from(JSON.stringify({ ...CLAIMS, room: 'other' })).toString('base64url')}.${s}`;
    }],
    ['garbage', () => 'not.a.token'],
  ];
  for (const [what, make] of refused) {
    it(`refuses ${what}`, async () => assert.equal(await verifySignalingToken(make(), keys, expected), undefined));
  }
});
