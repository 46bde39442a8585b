import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import type { TokenResponse } from '@rtc/protocol';
import { bearer, createCustomer, type Customer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { startServer } from '../helpers/platform.ts';
import { issue, jwksOf, runCli, useTempDirs, verifyGrant } from './serve-helpers.ts';

describe('rtc serve: restarts on the same data directory and key rotation', () => {
  const tempDir = useTempDirs();

  let dataDir: string;
  let customer: Customer;
  let firstGrant: TokenResponse;
  let firstKid: string;

  before(async () => {
    // a data directory that does not exist yet: the first start creates it
    dataDir = join(tempDir(), 'var', 'rtc');
    const first = await startServer({ dataDir });
    try {
      customer = await createCustomer(first);
      firstGrant = await issue(first.token, customer);
      firstKid = String(decodeProtectedHeader(firstGrant.media.grant).kid);
    } finally {
      await first.stop();
    }
  });

  it('creates the data directory private to its owner (mode 0700)', () => {
    assert.equal((statSync(dataDir).mode & 0o777).toString(8), '700');
  });

  it('keeps keys.json private to its owner (mode 0600)', () => {
    const mode = statSync(join(dataDir, 'keys.json')).mode & 0o777;
    assert.equal(mode.toString(8), '600');
  });

  it('keeps the store private to its owner', () => {
    const mode = statSync(join(dataDir, 'rtc.sqlite')).mode & 0o777;
    assert.equal(mode & 0o077, 0, `rtc.sqlite has mode ${mode.toString(8)}`);
  });

  it('keeps accounts, sessions, projects and credentials, and reuses the keys', async () => {
    const keysBefore = readFileSync(join(dataDir, 'keys.json'), 'utf8');
    const server = await startServer({ dataDir });
    try {
      const me = await request(`${server.api}/v1/projects/${customer.projectId}`, { headers: bearer(customer.accessToken) });
      assert.equal(me.status, 200, me.text);
      const t = await issue(server.api, customer);
      assert.equal(t.project_id, customer.projectId);
      assert.equal(decodeProtectedHeader(t.media.grant).kid, firstKid);
      await verifyGrant(firstGrant.media.grant, await jwksOf(server.token));
      const revoke = await request(`${server.token}/v1/rtc/tokens/revoke`, {
        headers: { authorization: customer.auth }, body: { revocation_handle: firstGrant.media.revocation_handle },
      });
      assert.equal(revoke.status, 200, revoke.text);
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
    assert.equal(readFileSync(join(dataDir, 'keys.json'), 'utf8'), keysBefore);
  });

  it('rotates keys with `rtc keys rotate`: both kids published, new grants on the new key, old grants still verify', async () => {
    const rotated = await runCli(['keys', 'rotate'], { RTC_DATA_DIR: dataDir });
    assert.equal(rotated.code, 0, rotated.stderr);
    const out = JSON.parse(rotated.stdout) as { rotated: boolean; signing_kid: string; media_master_kid: string };
    assert.equal(out.rotated, true);
    assert.notEqual(out.signing_kid, firstKid);
    assert.equal(statSync(join(dataDir, 'keys.json')).mode & 0o777, 0o600);

    const server = await startServer({ dataDir });
    try {
      for (const host of [server.api, server.token]) {
        const jwks = await jwksOf(host);
        assert.deepEqual(jwks.keys.map((k) => k.kid).sort(), [firstKid, out.signing_kid].sort());
        await verifyGrant(firstGrant.media.grant, jwks);
      }
      const t = await issue(server.token, customer);
      assert.equal(decodeProtectedHeader(t.media.grant).kid, out.signing_kid);
      const jwks = await jwksOf(server.api);
      await verifyGrant(t.media.grant, jwks);
      const { payload } = await jwtVerify(t.media.grant, createLocalJWKSet(jwks));
      assert.deepEqual(payload['cnf'], { kid: out.media_master_kid });
      // the App Secret and the revocation handles do not depend on the rotated keys
      const revoke = await request(`${server.api}/v1/rtc/tokens/revoke`, {
        headers: { authorization: customer.auth }, body: { revocation_handle: t.media.revocation_handle },
      });
      assert.equal(revoke.status, 200, revoke.text);
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });
});
