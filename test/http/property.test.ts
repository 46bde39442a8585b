import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { ERROR_STATUS, GUEST_USER_PREFIX, isErrorCode, type TokenResponse } from '@rtc/protocol';
import { createCustomer, type Customer } from '../helpers/customer.ts';
import { freshAddress, type HttpResult } from '../helpers/http.ts';
import { startInProcess, type InProcessPlatform } from '../helpers/inproc.ts';
import {
  defineField, dropField, opaqueId, setField, setStreams, TOKEN_FIELDS, TOKEN_ROLES, validTokenBody, type BodyMutation,
} from '../helpers/token-arbitraries.ts';

// Random bodies through real HTTP: never a 5xx; either 200 with a token that verifies and echoes the
// request, or a 4xx whose body is exactly {"error","message"} with a catalogue code and its status.
// The only exception is the documented 502 for turn: true or signaling: true on a deployment that has
// neither, and only for a request that passed every other check.

const RUNS = 120;

const validBody = validTokenBody({
  // the guest_ prefix is the share-link guests' alone (docs/reference/token-api.md, "Request rules")
  userId: opaqueId.filter((id) => !id.startsWith(GUEST_USER_PREFIX)),
});

const mutation: fc.Arbitrary<BodyMutation> = fc.oneof(
  dropField,
  setField(fc.jsonValue({ maxDepth: 2 })),
  defineField(fc.oneof(fc.string({ maxLength: 16 }), fc.constantFrom('__proto__', 'constructor', 'project_id', 'app_id')), fc.jsonValue({ maxDepth: 1 })),
  setStreams(fc.oneof(fc.integer({ min: -2, max: 5 }), fc.constantFrom(0, 4294967295, 4294967296, 1.5, -0))),
  fc.tuple(fc.constantFrom('ttl_seconds'), fc.oneof(fc.integer({ min: -5, max: 4000 }), fc.double({ noNaN: true }))).map(([field, value]): BodyMutation => (b) => ({ ...b, [field]: value })),
  fc.constant<BodyMutation>((b) => ({ ...b, turn: true })),
  fc.constant<BodyMutation>((b) => ({ ...b, signaling: true })),
);

describe('token API properties over real HTTP', () => {
  let server: InProcessPlatform;
  let customers: Customer[];
  let keySet: ReturnType<typeof createLocalJWKSet>;

  before(async () => {
    // a deployment without TURN or signaling, so turn/signaling: true have one documented answer (502)
    server = await startInProcess({ env: { RTC_TURN_SECRET: '', RTC_TURN_URIS: '', RTC_SIGNALING_PUBLIC_URL: '' } });
    customers = await Promise.all([
      createCustomer(server),
      createCustomer(server, { scopes: ['subscriber'] }),
      createCustomer(server, { scopes: ['publisher'], max_ttl_seconds: 300 }),
    ]);
    keySet = createLocalJWKSet((await server.request(`${server.token}/.well-known/jwks.json`)).json<JSONWebKeySet>());
  });
  after(async () => {
    await server.close();
  });

  /** The body's error answer is well formed and consistent with the catalogue. */
  function assertErrorAnswer(res: HttpResult): string {
    assert.ok(res.status >= 400 && res.status < 500, `a 4xx, got ${res.status}: ${res.text}`);
    const body = res.json<Record<string, unknown>>();
    assert.deepEqual(Object.keys(body).sort(), ['error', 'message'], res.text);
    assert.ok(isErrorCode(body['error']), `catalogue code: ${String(body['error'])}`);
    assert.equal(typeof body['message'], 'string');
    const code = body['error'];
    if (code === 'invalid_request') assert.ok([400, 413, 415].includes(res.status), res.text);
    else assert.equal(res.status, ERROR_STATUS[code], res.text);
    return code;
  }

  /** A 200 answer is a token for exactly what was asked, signed by a published key. */
  async function assertTokenAnswer(res: HttpResult, body: Record<string, unknown>, who: Customer): Promise<void> {
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.ok(Object.keys(body).every((k) => TOKEN_FIELDS.includes(k)), `an unknown field was accepted: ${JSON.stringify(body)}`);
    const t = res.json<TokenResponse>();
    assert.equal(t.project_id, who.projectId);
    assert.equal(t.app_id, who.appId);
    assert.equal(t.room_id, body['room_id']);
    assert.equal(t.user_id, body['user_id']);
    assert.equal(t.role, body['role']);
    assert.deepEqual(t.publish_streams, body['publish_streams'] ?? []);
    assert.deepEqual(t.subscribe_streams, body['subscribe_streams'] ?? []);
    assert.equal(t.subscribe_room, body['subscribe_room'] === true);
    const ttl = t.expires_at - t.issued_at;
    if (body['ttl_seconds'] !== undefined) assert.equal(ttl, body['ttl_seconds']);
    assert.ok(Number.isInteger(ttl) && ttl >= 1 && ttl <= 3600);
    assert.match(t.media.key, /^[A-Za-z0-9_-]{43}$/);
    assert.match(t.media.revocation_handle, /^rvk_[A-Za-z0-9_-]+$/);
    const { payload } = await jwtVerify(t.media.grant, keySet, { currentDate: new Date(server.clock.nowMs()), audience: 'rtc-media', algorithms: ['EdDSA'] });
    assert.equal(payload['prj'], who.projectId);
    assert.equal(payload['room'], t.room_id);
    assert.equal(payload.sub, t.user_id);
    assert.deepEqual(payload['pub'], t.publish_streams);
    assert.deepEqual(payload['subs'], t.subscribe_streams);
    assert.equal(payload.exp, t.expires_at);
  }

  async function check(address: string, hostIndex: number, who: Customer, body: unknown, raw?: string): Promise<void> {
    const base = hostIndex === 0 ? server.api : server.token;
    const res = await server.request(`${base}/v1/rtc/tokens`, {
      headers: { authorization: who.auth, 'content-type': 'application/json' },
      body: raw ?? JSON.stringify(body), localAddress: address,
    });
    if (res.status === 502) {
      // the one 5xx this deployment documents: turn or signaling asked of a platform without them
      const asked = body as Record<string, unknown>;
      const code = res.json<{ error: string }>().error;
      assert.ok(Object.keys(asked).every((k) => TOKEN_FIELDS.includes(k)), `502 only after validation: ${res.text}`);
      assert.ok((code === 'turn_unavailable' && asked['turn'] === true) || (code === 'signaling_unavailable' && asked['signaling'] === true), res.text);
      return;
    }
    assert.ok(res.status < 500, `no 5xx: ${res.status} ${res.text} for ${raw ?? JSON.stringify(body)}`);
    if (res.status === 200) {
      await assertTokenAnswer(res, body as Record<string, unknown>, who);
      return;
    }
    const code = assertErrorAnswer(res);
    // independent oracle: what is certainly wrong is certainly refused with 400
    const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
    if (raw === undefined && (!isObject || Object.keys(body).some((k) => !TOKEN_FIELDS.includes(k)))) {
      assert.equal(code, 'invalid_request', res.text);
    }
  }

  const pick = fc.tuple(fc.nat(1), fc.nat(2));

  it('answers mutated valid bodies with a faithful token or a catalogue 4xx', async () => {
    const address = freshAddress();
    await fc.assert(fc.asyncProperty(pick, validBody, fc.array(mutation, { maxLength: 3 }), async ([h, c], body, mutations) => {
      await check(address, h, customers[c]!, mutations.reduce((b, m) => m(b), body));
    }), { numRuns: RUNS * 2, includeErrorInReport: true });
  });

  it('answers arbitrary JSON values with a catalogue 4xx (or a faithful token)', async () => {
    const address = freshAddress();
    const bodies = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.dictionary(fc.oneof(fc.constantFrom(...TOKEN_FIELDS), fc.string({ maxLength: 12 })), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 10 }),
    );
    await fc.assert(fc.asyncProperty(pick, bodies, async ([h, c], body) => {
      await check(address, h, customers[c]!, body);
    }), { numRuns: RUNS, includeErrorInReport: true });
  });

  it('answers arbitrary and broken JSON text without a 5xx', async () => {
    const address = freshAddress();
    const texts = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.json({ maxDepth: 3 }).chain((text) => fc.nat(text.length).map((n) => text.slice(0, n))),
      fc.constantFrom('{"a":1e400}', '{"room_id":"r","user_id":"u","role":"host","ttl_seconds":1e400}', '[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]',
        '{"room_id":"r","user_id":"u","role":"host","publish_streams":[1e-400]}', '\u0000', '{"room_id":"\\ud800","user_id":"u","role":"host"}'),
    );
    await fc.assert(fc.asyncProperty(pick, texts, async ([h, c], text) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      await check(address, h, customers[c]!, parsed, text);
    }), { numRuns: RUNS, includeErrorInReport: true });
  });

  it('answers arbitrary revoke bodies with 200 {"revoked":true} or a catalogue 4xx', async () => {
    const address = freshAddress();
    const bodies = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.record({ revocation_handle: fc.oneof(fc.string({ maxLength: 600 }), fc.jsonValue({ maxDepth: 1 })) }),
      fc.string({ maxLength: 80 }).map((s) => ({ revocation_handle: `rvk_${s}` })),
    );
    await fc.assert(fc.asyncProperty(pick, bodies, async ([h, c], body) => {
      const res = await server.request(`${h === 0 ? server.api : server.token}/v1/rtc/tokens/revoke`, {
        headers: { authorization: customers[c]!.auth, 'content-type': 'application/json' }, body: JSON.stringify(body), localAddress: address,
      });
      assert.ok(res.status < 500, `no 5xx: ${res.status} ${res.text}`);
      if (res.status === 200) assert.deepEqual(res.json(), { revoked: true });
      else assert.ok(['invalid_request', 'unknown_handle'].includes(assertErrorAnswer(res)), res.text);
    }), { numRuns: RUNS, includeErrorInReport: true });
  });

  it('answers arbitrary POST /v1/tokens bodies without a 5xx', async () => {
    const address = freshAddress();
    const who = customers[0]!;
    const bodies = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.record({
        app_id: fc.oneof(fc.constant(who.appId), fc.string({ maxLength: 30 })), user_id: fc.oneof(opaqueId, fc.jsonValue({ maxDepth: 1 })),
        room_id: opaqueId, role: fc.oneof(fc.constantFrom(...TOKEN_ROLES), fc.string({ maxLength: 8 })),
        ttl_sec: fc.oneof(fc.integer({ min: -10, max: 4000 }), fc.jsonValue({ maxDepth: 1 })),
      }, { requiredKeys: [] }),
    );
    await fc.assert(fc.asyncProperty(bodies, async (body) => {
      const res = await server.request(`${server.token}/v1/tokens`, {
        headers: { authorization: who.auth, 'content-type': 'application/json' }, body: JSON.stringify(body), localAddress: address,
      });
      assert.ok(res.status < 500, `no 5xx: ${res.status} ${res.text}`);
      if (res.status === 200) {
        const t = res.json<TokenResponse>();
        const sent = body as Record<string, unknown>;
        assert.equal(sent['app_id'], who.appId);
        assert.equal(t.app_id, who.appId);
        assert.equal(t.user_id, sent['user_id']);
        await jwtVerify(t.media.grant, keySet, { currentDate: new Date(server.clock.nowMs()), audience: 'rtc-media' });
      } else {
        assertErrorAnswer(res);
      }
    }), { numRuns: RUNS, includeErrorInReport: true });
  });
});
