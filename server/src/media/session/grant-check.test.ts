import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { encodeHeader, NONCE_LABEL, type GrantClaims } from '@rtc/protocol';
import { deriveSessionKeys as sdkSessionKeys, proofOfPossession as sdkProof, seal as sdkSeal, sha256 } from '../../../../sdk/app/src/crypto.ts';
import { GRANT_TYPE, SIGNALING_TOKEN_TYPE, signJws } from '../../core/grant.ts';
import type { MediaMasterKey, SigningKey } from '../../core/keyring.ts';
import { deriveMediaKey } from '../../tokens/media-key.ts';
import { open } from '../frames/frame.ts';
import { checkGrant, deriveSessionKeys, proofOfPossession, verifyProof, type GrantKeys } from './grant-check.ts';

function signingKey(kid: string): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { kid, privateKey, publicKey, retireAt: undefined };
}

const current = signingKey('sig-1');
const stranger = signingKey('sig-2');
const impostor = signingKey('sig-1');
const master: MediaMasterKey = { kid: 'mk-1', secret: randomBytes(32), retireAt: undefined };
const keys: GrantKeys = { verifying: new Map([[current.kid, current]]), masters: new Map([[master.kid, master]]), issuer: 'rtc-platform' };
const NOW = 1_800_000_000;
const JTI = randomBytes(16).toString('base64url');

const CLAIMS: GrantClaims = {
  iss: 'rtc-platform', aud: 'rtc-media', jti: JTI, prj: `prj_${'A'.repeat(22)}`, app: `app_${'B'.repeat(22)}`, room: 'room-1',
  sub: 'user-1', role: 'speaker', pub: [1, 2], subs: [3], sub_room: false, iat: NOW - 5, exp: NOW + 600, cnf: { kid: 'mk-1' },
};

const grant = (claims: Partial<Record<keyof GrantClaims, unknown>>, key = current, typ = GRANT_TYPE): string =>
  signJws({ ...CLAIMS, ...claims } as GrantClaims, key, typ);

describe('checkGrant', () => {
  it('accepts a grant and derives the same media key as the token API', async () => {
    const result = await checkGrant(grant({}), keys, NOW);
    assert.ok(result.ok);
    assert.deepEqual(result.mediaKey, deriveMediaKey(master.secret, Buffer.from(JTI, 'base64url')));
    assert.equal(result.grant.userId, 'user-1');
    assert.deepEqual([...result.grant.pub], [1, 2]);
    assert.equal(result.grant.expiresAt, NOW + 600);
  });

  const unauthorized: [string, () => string][] = [
    ['a tampered payload', () => {
      const [h, , s] = grant({}).split('.');
      return `${h}.${Buffer.from(JSON.stringify({ ...CLAIMS, room: 'room-2' })).toString('base64url')}.${s}`;
    }],
    ['a known kid with another key', () => grant({}, impostor)],
    ['the signaling token type', () => grant({ aud: 'rtc-signaling' }, current, SIGNALING_TOKEN_TYPE)],
    ['another audience', () => grant({ aud: 'rtc-signaling' })],
    ['another issuer', () => grant({ iss: 'elsewhere' })],
    ['no cnf', () => grant({ cnf: null })],
    ['an audience role that publishes', () => grant({ role: 'audience' })],
    ['an unknown role', () => grant({ role: 'admin' })],
    ['a duplicate stream id', () => grant({ pub: [1, 1] })],
    ['stream id 0', () => grant({ subs: [0] })],
    ['nine publish streams', () => grant({ pub: [1, 2, 3, 4, 5, 6, 7, 8, 9] })],
    ['a non-boolean sub_room', () => grant({ sub_room: 'yes' })],
    ['a room with a space', () => grant({ room: 'a b' })],
    ['a bad project id', () => grant({ prj: 'prj_short' })],
    ['a short grant id', () => grant({ jti: 'abc' })],
    ['a fractional exp', () => grant({ exp: NOW + 0.5 })],
    ['iat in the future beyond the skew', () => grant({ iat: NOW + 120 })],
    ['garbage', () => 'not-a-jws'],
  ];
  for (const [name, make] of unauthorized) {
    it(`refuses ${name} as unauthorized`, async () => assert.deepEqual(await checkGrant(make(), keys, NOW), { ok: false, failure: 'unauthorized' }));
  }

  // a media server reloads its keys on these and checks once more: another node may sign with a newer key
  const unknownKey: [string, () => string][] = [
    ['an unknown key', () => grant({}, stranger)],
    ['an unknown media master', () => grant({ cnf: { kid: 'mk-9' } })],
  ];
  for (const [name, make] of unknownKey) {
    it(`refuses ${name} as unauthorized, saying the key is unknown`, async () =>
      assert.deepEqual(await checkGrant(make(), keys, NOW), { ok: false, failure: 'unauthorized', unknownKey: true }));
  }

  it('refuses a grant at its exp as expired', async () => {
    assert.deepEqual(await checkGrant(grant({}), keys, NOW + 600), { ok: false, failure: 'expired' });
  });
});

describe('proof of possession and session keys', () => {
  const k = randomBytes(32);
  const digest = randomBytes(32);
  const sn = randomBytes(32);
  const cn = randomBytes(32);

  it('accepts the proof the app SDK computes and nothing else', async () => {
    const proof = Buffer.from(await sdkProof(k, digest, sn, cn));
    assert.deepEqual(proof, proofOfPossession(k, digest, sn, cn));
    assert.equal(verifyProof(k, digest, sn, cn, proof), true);
    assert.equal(verifyProof(k, digest, randomBytes(32), cn, proof), false);
    assert.equal(verifyProof(randomBytes(32), digest, sn, cn, proof), false);
    assert.equal(verifyProof(k, digest, sn, cn, proof.subarray(0, 31)), false);
  });

  it('derives the session keys the app SDK derives', async () => {
    const sdk = await sdkSessionKeys(k, await sha256(Buffer.from('g')), sn, cn);
    const server = deriveSessionKeys(k, Buffer.from(await sha256(Buffer.from('g'))), sn, cn);
    const header = { kind: 0, epoch: 0, streamId: 0, seq: 1 };
    const up = Buffer.from(await sdkSeal(sdk.c2s, NONCE_LABEL.clientControl, encodeHeader(header), Buffer.from('up')));
    assert.equal(open(server.c2s, NONCE_LABEL.clientControl, up)?.toString(), 'up');
    assert.equal(open(server.s2c, NONCE_LABEL.clientControl, up), undefined);
    assert.notDeepEqual(server.c2s, server.s2c);
  });
});
