import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import type { TokenResponse } from '@rtc/protocol';
import { loadKeyRing } from '../../server/src/keys/file-keyring.ts';
import { loadConfig } from '../../server/src/config.ts';
import { createPasswordHasher } from '../../server/src/core/password.ts';
import { composeServices, type Services } from '../../server/src/main/compose.ts';
import { createCustomer, type Customer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { startServer, type RunningServer } from '../helpers/platform.ts';
import { startPostgres, type Postgres } from '../helpers/postgres.ts';
import { join as joinMedia, nextEvent } from '../helpers/media-session.ts';
import { issue, jwksOf, runCli, TOKEN_BODY, useTempDirs, verifyGrant } from './serve-helpers.ts';

const kidOf = (grant: string): string => String(decodeProtectedHeader(grant).kid);

describe('keys on PostgreSQL: one ring for every node, rotation without restart', () => {
  const tempDir = useTempDirs();
  let postgres: Postgres;
  const servers: RunningServer[] = [];

  before(async () => {
    postgres = await startPostgres();
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await postgres.stop();
  });

  const compose = (url: string, dataDir: string): Promise<Services> => composeServices(
    loadConfig({ DATABASE_URL: url, RTC_DATA_DIR: dataDir, RTC_ROLES: 'api,token' }),
    { onBusError: (err) => { throw err; }, passwords: createPasswordHasher({ N: 1024, r: 8, p: 1 }) },
  );
  const closeAll = async (all: readonly Services[]): Promise<void> => {
    for (const deps of all) {
      await deps.close();
    }
  };

  it('gives nodes that start together on an empty database, each with its own data directory, the one same ring', async () => {
    const url = await postgres.createDatabase();
    const nodes = await Promise.all(Array.from({ length: 4 }, () => compose(url, tempDir())));
    try {
      const [first] = nodes as [Services];
      for (const deps of nodes) {
        assert.equal(deps.keys.signing.kid, first.keys.signing.kid);
        assert.equal(deps.keys.mediaMaster.kid, first.keys.mediaMaster.kid);
        assert.ok(deps.keys.secretHashKey.equals(first.keys.secretHashKey));
        assert.ok(deps.keys.handleKey.equals(first.keys.handleKey));
      }
    } finally {
      await closeAll(nodes);
    }
  });

  it('takes the keys.json of the data directory into a database that has no ring yet, so App Secret hashes stay valid', async () => {
    const url = await postgres.createDatabase();
    const dataDir = tempDir();
    const fromFile = loadKeyRing(dataDir, Math.floor(Date.now() / 1000));
    const a = await compose(url, dataDir);
    const b = await compose(url, tempDir());
    try {
      for (const deps of [a, b]) {
        assert.equal(deps.keys.signing.kid, fromFile.signing.kid);
        assert.ok(deps.keys.secretHashKey.equals(fromFile.secretHashKey));
      }
    } finally {
      await closeAll([a, b]);
    }
  });

  describe('rtc serve processes on one database', () => {
    let url: string;
    let a: RunningServer;
    let b: RunningServer;
    let customer: Customer;
    let firstKid: string;
    const env = (): Record<string, string> => ({
      DATABASE_URL: url, RTC_APP_RATE_LIMIT_PER_MINUTE: '100000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '100000',
    });

    before(async () => {
      url = await postgres.createDatabase();
      // two nodes, no shared directory: the keys can only come from the database
      [a, b] = await Promise.all([
        startServer({ dataDir: tempDir(), roles: ['api', 'token', 'media'], env: env() }),
        startServer({ dataDir: tempDir(), roles: ['api', 'token', 'media'], env: env() }),
      ]);
      servers.push(a, b);
    });

    it('signs with one key on every node, and a credential made on one authenticates on the other', async () => {
      customer = await createCustomer(a);
      const onB = await issue(b.token, customer);
      const onA = await issue(a.token, customer);
      firstKid = kidOf(onA.media.grant);
      assert.equal(kidOf(onB.media.grant), firstKid);
      assert.deepEqual(await jwksOf(a.token), await jwksOf(b.token));
      // a grant issued by B opens a media session on A: the same media master key too
      const session = await joinMedia(onB, { url: a.urls['media'] });
      await session.close();
    });

    it('rotates with `rtc keys rotate`: running nodes accept old and new grants and take the new key without a restart', async () => {
      const oldGrant = await issue(b.token, customer);
      // a session on B's media role, renewed after the rotation with a grant signed by the new key
      let renewFrom = b.token;
      const issueFor = async (user: string): Promise<TokenResponse> => {
        const res = await request(`${renewFrom}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body: { ...TOKEN_BODY, user_id: user } });
        assert.equal(res.status, 200, res.text);
        return res.json<TokenResponse>();
      };
      const held = await joinMedia(await issueFor('user-2'), { url: b.urls['media'], getToken: () => issueFor('user-2') });

      const rotated = await runCli(['keys', 'rotate'], { DATABASE_URL: url, RTC_DATA_DIR: tempDir() });
      assert.equal(rotated.code, 0, rotated.stderr);
      const { signing_kid: newKid } = JSON.parse(rotated.stdout) as { signing_kid: string };
      assert.notEqual(newKid, firstKid);

      // a node started after the rotation signs with the new key at once
      const c = await startServer({ dataDir: tempDir(), roles: ['api', 'token'], env: env() });
      servers.push(c);
      const newGrant = await issue(c.token, customer);
      assert.equal(kidOf(newGrant.media.grant), newKid);

      // B's media role has not looked at the database since: the renewal's unknown kid makes it reload
      renewFrom = c.token;
      const renewed = nextEvent(held, 'renewed');
      await held.renew();
      await renewed;
      assert.match(b.output(), new RegExp(`"signingKid":"${newKid}".*"msg":"key ring reloaded"`));
      await held.close();

      // A's media role has not looked at the database since: the unknown kid makes it reload
      const fresh = await joinMedia(newGrant, { url: a.urls['media'] });
      await fresh.close();
      assert.match(a.output(), new RegExp(`"signingKid":"${newKid}".*"msg":"key ring reloaded"`));
      // and the grant signed before the rotation still opens a session until it expires
      const old = await joinMedia(oldGrant, { url: a.urls['media'] });
      await old.close();

      // A now signs with the new key and publishes both
      assert.equal(kidOf((await issue(a.token, customer)).media.grant), newKid);
      const jwks = await jwksOf(a.token);
      assert.deepEqual(jwks.keys.map((k) => k.kid).sort(), [firstKid, newKid].sort());
      await verifyGrant(oldGrant.media.grant, jwks);
      await verifyGrant(newGrant.media.grant, jwks);

      // the App Secret and revocation handles do not depend on the rotated keys
      const revoke = await request(`${c.token}/v1/rtc/tokens/revoke`, {
        headers: { authorization: customer.auth }, body: { revocation_handle: oldGrant.media.revocation_handle },
      });
      assert.equal(revoke.status, 200, revoke.text);
    });

    it('refuses a rotation of a database that has no ring yet (exit code 1)', async () => {
      const result = await runCli(['keys', 'rotate'], { DATABASE_URL: await postgres.createDatabase(), RTC_DATA_DIR: tempDir() });
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /^rtc: keys rotate: no key ring in the database: `rtc serve` creates it on its first start\n$/);
    });
  });
});
