/** Token issuance and grant checks the tests share, and temporary directories removed after a describe block. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import type { TokenResponse } from '@rtc/protocol';
import type { Customer } from './customer.ts';
import { request } from './http.ts';

export const TOKEN_BODY = { room_id: 'room-1', user_id: 'user-1', role: 'speaker', publish_streams: [1] };

export async function issue(host: string, customer: Customer): Promise<TokenResponse> {
  const res = await request(`${host}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body: TOKEN_BODY });
  assert.equal(res.status, 200, res.text);
  return res.json<TokenResponse>();
}

export async function jwksOf(host: string): Promise<JSONWebKeySet> {
  const res = await request(`${host}/.well-known/jwks.json`);
  assert.equal(res.status, 200, res.text);
  return res.json<JSONWebKeySet>();
}

export async function verifyGrant(grant: string, jwks: JSONWebKeySet): Promise<void> {
  await jwtVerify(grant, createLocalJWKSet(jwks), { audience: 'rtc-media', typ: 'rtc-grant+jwt', algorithms: ['EdDSA'] });
}

/** A fresh temporary directory for each call, all removed after the enclosing describe block. */
export function useTempDirs(): () => string {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), 'rtc-serve-'));
    dirs.push(dir);
    return dir;
  };
}
