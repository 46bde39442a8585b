import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { decodeJwt } from 'jose';
import type { TokenResponse, TurnCredentials } from '@rtc/protocol';
import { turnCredentials } from '../../server/src/tokens/turn.ts';
import { allocateRelay, startCoturn, type AllocationResult, type Coturn } from '../helpers/coturn.ts';
import { createCustomer, type Customer } from '../helpers/customer.ts';
import { request } from '../helpers/http.ts';
import { startServer, type RunningServer } from '../helpers/platform.ts';

function assertAllocated(result: AllocationResult, coturn: Coturn, what: string): void {
  assert.ok(result.ok, `${what}: no relay (exit ${result.exitCode}):\n${result.output.slice(-2000)}`);
  const port = Number(result.relay!.split(':')[1]);
  assert.ok(port >= coturn.relayPorts.min && port <= coturn.relayPorts.max, `${what}: relay ${result.relay}`);
}

function assertRefused(result: AllocationResult, what: string): void {
  assert.equal(result.ok, false, `${what}: coturn allocated ${result.relay}`);
  assert.equal(result.relay, undefined, what);
  assert.notEqual(result.exitCode, 0, what);
}

describe('TURN credentials against a real coturn', () => {
  const secret = randomBytes(24).toString('base64url');
  let coturn: Coturn;
  let server: RunningServer;
  let customer: Customer;
  let uris: string[];

  const issue = async (extra: Record<string, unknown> = {}): Promise<TokenResponse & { turn: TurnCredentials }> => {
    const res = await request(`${server.token}/v1/rtc/tokens`, {
      headers: { authorization: customer.auth },
      body: { room_id: 'r-turn', user_id: 'u-turn', role: 'speaker', publish_streams: [1], turn: true, ...extra },
    });
    assert.equal(res.status, 200, res.text);
    const token = res.json<TokenResponse>();
    assert.ok(token.turn, 'the response carries turn');
    return token as TokenResponse & { turn: TurnCredentials };
  };

  before(async () => {
    coturn = await startCoturn({ secret, tls: true });
    uris = [
      `turn:${coturn.host}:${coturn.port}?transport=udp`,
      `turn:${coturn.host}:${coturn.port}?transport=tcp`,
      `turns:${coturn.host}:${coturn.tlsPort}?transport=tcp`,
    ];
    server = await startServer({ env: { RTC_TURN_SECRET: secret, RTC_TURN_URIS: uris.join(',') } });
    customer = await createCustomer(server);
  });
  after(async () => {
    await server?.stop();
    await coturn?.stop();
  });

  it('returns credentials in the TURN REST API scheme, valid until expires_at', async () => {
    const t = await issue();
    const jti = String(decodeJwt(t.media.grant).jti);
    assert.equal(t.turn.username, `${t.expires_at}:${jti}`);
    assert.match(t.turn.credential, /^[A-Za-z0-9+/]{27}=$/);
    assert.deepEqual(t.turn.uris, uris);
    assert.equal(t.turn.credential, turnCredentials(secret, uris, t.expires_at, jti).credential);
    // asked without turn, the response has none
    const plain = await request(`${server.token}/v1/rtc/tokens`, {
      headers: { authorization: customer.auth }, body: { room_id: 'r', user_id: 'u', role: 'host' },
    });
    assert.equal(plain.json<TokenResponse>().turn, undefined);
  });

  it('allocates a relay over UDP, TCP and TLS with issued credentials, and refuses altered or foreign ones', async () => {
    const t = await issue();
    const { username, credential } = t.turn;
    const flipped = `${credential[0] === 'A' ? 'B' : 'A'}${credential.slice(1)}`;
    const later = `${t.expires_at + 3600}:${username.split(':')[1]}`;
    const [udp, tcp, tls, altered, longer, foreign] = await Promise.all([
      allocateRelay(coturn, t.turn, 'udp'),
      allocateRelay(coturn, t.turn, 'tcp'),
      allocateRelay(coturn, t.turn, 'tls'),
      allocateRelay(coturn, { username, credential: flipped }, 'udp'),
      allocateRelay(coturn, { username: later, credential }, 'udp'),
      allocateRelay(coturn, turnCredentials(randomBytes(24).toString('base64url'), uris, t.expires_at, username.split(':')[1]!), 'udp'),
    ]);
    assertAllocated(udp, coturn, 'udp');
    assertAllocated(tcp, coturn, 'tcp');
    assertAllocated(tls, coturn, 'tls');
    assertRefused(altered, 'an altered credential');
    assertRefused(longer, 'a username with a later expiry');
    assertRefused(foreign, 'a credential of another secret');
  });

  it('refuses credentials once their token has expired', async () => {
    const t = await issue({ ttl_seconds: 1 });
    // coturn compares whole seconds: wait until expires_at is in the past
    while (Date.now() / 1000 <= t.expires_at + 1) await delay(200);
    const [udp, tcp] = await Promise.all([allocateRelay(coturn, t.turn, 'udp'), allocateRelay(coturn, t.turn, 'tcp')]);
    assertRefused(udp, 'an expired credential over udp');
    assertRefused(tcp, 'an expired credential over tcp');
  });
});

describe('TURN where no relay is configured', () => {
  it('answers 502 turn_unavailable', async () => {
    const server = await startServer();
    try {
      const customer = await createCustomer(server);
      const res = await request(`${server.token}/v1/rtc/tokens`, {
        headers: { authorization: customer.auth }, body: { room_id: 'r', user_id: 'u', role: 'host', turn: true },
      });
      assert.equal(res.status, 502);
      assert.equal(res.json()['error'], 'turn_unavailable');
    } finally {
      await server.stop();
    }
  });
});
