import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ApiError } from '../core/errors.ts';
import { applyTokenPolicy, type CredentialPolicy } from './policy.ts';
import { revocationRequestSchema, tokenRequestSchema, tokenServiceRequestSchema } from './schemas.ts';
import { parseJsonBody, validate } from '../http/validate.ts';
import {
  defineField, dropField, setField, setStreams, TOKEN_FIELDS, TOKEN_ROLES, validTokenBody, type BodyMutation,
} from '../../../test/helpers/token-arbitraries.ts';

const VALID = { room_id: 'room-1', user_id: 'user-1', role: 'host' } as const;
const ID = /^[\x21-\x7e]{1,128}$/;

/** The `400 invalid_request` message that `validate` gives for `body`. */
function rejection(schema: Parameters<typeof validate>[0], body: unknown): string {
  try {
    validate(schema, body);
  } catch (err) {
    assert.ok(err instanceof ApiError, `an ApiError, not ${String(err)}`);
    assert.equal(err.code, 'invalid_request');
    assert.equal(err.status, 400);
    return err.message;
  }
  assert.fail(`accepted ${JSON.stringify(body)}`);
}

describe('validate(tokenRequestSchema)', () => {
  it('returns a valid body unchanged', () => {
    const body = { ...VALID, publish_streams: [1], subscribe_streams: [2], subscribe_room: false, ttl_seconds: 60, turn: false, signaling: false };
    assert.deepEqual(validate(tokenRequestSchema, body), body);
  });

  const TABLE: readonly (readonly [string, unknown, RegExp])[] = [
    ['missing room_id', { user_id: 'u', role: 'host' }, /^room_id is required$/],
    ['missing user_id', { room_id: 'r', role: 'host' }, /^user_id is required$/],
    ['missing role', { room_id: 'r', user_id: 'u' }, /^role is required$/],
    ['a role outside the enum', { ...VALID, role: 'root' }, /^role must be one of host, cohost, speaker, participant, audience$/],
    ['an empty room_id', { ...VALID, room_id: '' }, /^room_id must be 1-128 printable ASCII characters without spaces$/],
    ['a 129-character user_id', { ...VALID, user_id: 'u'.repeat(129) }, /^user_id must be 1-128/],
    ['a space', { ...VALID, room_id: 'a b' }, /^room_id must be 1-128/],
    ['a control character', { ...VALID, room_id: '\u0000' }, /^room_id must be 1-128/],
    ['non-ASCII', { ...VALID, user_id: 'ü' }, /^user_id must be 1-128/],
    ['stream id 0', { ...VALID, publish_streams: [0] }, /^publish_streams must hold integer stream ids from 1 to 4294967295$/],
    ['stream id 2^32', { ...VALID, subscribe_streams: [4294967296] }, /^subscribe_streams must hold integer stream ids/],
    ['a fractional stream id', { ...VALID, subscribe_streams: [2.5] }, /^subscribe_streams must hold integer stream ids/],
    ['an infinite stream id', { ...VALID, publish_streams: [Infinity] }, /^publish_streams must hold integer stream ids/],
    ['NaN as a stream id', { ...VALID, publish_streams: [NaN] }, /^publish_streams must hold integer stream ids/],
    ['9 publish streams', { ...VALID, publish_streams: [1, 2, 3, 4, 5, 6, 7, 8, 9] }, /^publish_streams may list at most 8 stream ids$/],
    ['33 subscribe streams', { ...VALID, subscribe_streams: Array.from({ length: 33 }, (_, i) => i + 1) }, /^subscribe_streams may list at most 32/],
    ['a repeated publish stream', { ...VALID, publish_streams: [5, 5] }, /^publish_streams must not repeat a stream id$/],
    ['a repeated subscribe stream', { ...VALID, subscribe_streams: [5, 6, 5] }, /^subscribe_streams must not repeat a stream id$/],
    ['ttl_seconds 0', { ...VALID, ttl_seconds: 0 }, /^ttl_seconds must be an integer from 1 to 3600$/],
    ['ttl_seconds 3601', { ...VALID, ttl_seconds: 3601 }, /^ttl_seconds must be at most 3600/],
    ['ttl_seconds 1.5', { ...VALID, ttl_seconds: 1.5 }, /^ttl_seconds must be an integer from 1 to 3600$/],
    ['ttl_seconds as a string', { ...VALID, ttl_seconds: '600' }, /^ttl_seconds must be an integer from 1 to 3600$/],
    ['subscribe_room as a string', { ...VALID, subscribe_room: 'yes' }, /^subscribe_room must be true or false$/],
    ['turn as a number', { ...VALID, turn: 1 }, /^turn must be true or false$/],
    ['signaling as null', { ...VALID, signaling: null }, /^signaling must be true or false$/],
    ['an unknown field', { ...VALID, extra: true }, /^unknown field "extra" is not allowed$/],
    ['an own __proto__ field', JSON.parse('{"room_id":"r","user_id":"u","role":"host","__proto__":{}}'), /^unknown field "__proto__" is not allowed$/],
    ['an own constructor field', JSON.parse('{"room_id":"r","user_id":"u","role":"host","constructor":{}}'), /^unknown field "constructor" is not allowed$/],
    ['an array body', [VALID], /^the request body must be a JSON object$/],
    ['a null body', null, /^the request body must be a JSON object$/],
    ['a number body', 1, /^the request body must be a JSON object$/],
    ['a string body', 'room', /^the request body must be a JSON object$/],
  ];
  for (const [what, body, message] of TABLE) {
    it(`rejects ${what}`, () => {
      assert.match(rejection(tokenRequestSchema, body), message);
    });
  }

  it('accepts the limits themselves', () => {
    const body = {
      room_id: '!'.repeat(128), user_id: '~', role: 'audience', subscribe_streams: Array.from({ length: 32 }, (_, i) => 4294967295 - i),
      ttl_seconds: 3600,
    };
    assert.deepEqual(validate(tokenRequestSchema, body), body);
    assert.deepEqual(validate(tokenRequestSchema, { ...VALID, publish_streams: [1, 2, 3, 4, 5, 6, 7, 4294967295], ttl_seconds: 1 }).publish_streams,
      [1, 2, 3, 4, 5, 6, 7, 4294967295]);
  });
});

describe('validate(tokenServiceRequestSchema)', () => {
  const BODY = { app_id: 'app_x', user_id: 'u', room_id: 'r', role: 'host', ttl_sec: 60 };
  it('accepts the documented fields', () => {
    assert.deepEqual(validate(tokenServiceRequestSchema, BODY), BODY);
  });
  for (const [what, body, message] of [
    ['missing app_id', { user_id: 'u', room_id: 'r', role: 'host' }, /^app_id is required$/],
    ['a non-string app_id', { ...BODY, app_id: 7 }, /^app_id must be a string$/],
    ['ttl_sec 0', { ...BODY, ttl_sec: 0 }, /^ttl_sec must be an integer from 1 to 3600$/],
    ['ttl_sec 3601', { ...BODY, ttl_sec: 3601 }, /^ttl_sec must be at most 3600/],
    ['ttl_seconds (the other endpoint\'s name)', { ...BODY, ttl_seconds: 60 }, /^unknown field "ttl_seconds" is not allowed$/],
    ['publish_streams', { ...BODY, publish_streams: [1] }, /^unknown field "publish_streams" is not allowed$/],
  ] as const) {
    it(`rejects ${what}`, () => {
      assert.match(rejection(tokenServiceRequestSchema, body), message);
    });
  }
});

describe('validate(revocationRequestSchema)', () => {
  it('accepts a handle string', () => {
    assert.deepEqual(validate(revocationRequestSchema, { revocation_handle: 'rvk_x' }), { revocation_handle: 'rvk_x' });
  });
  for (const [what, body, message] of [
    ['a missing handle', {}, /^revocation_handle is required$/],
    ['a non-string handle', { revocation_handle: 5 }, /^revocation_handle must be a string$/],
    ['a handle over 512 characters', { revocation_handle: 'a'.repeat(513) }, /^revocation_handle must be at most 512 characters$/],
    ['an unknown field', { revocation_handle: 'rvk_x', project_id: 'prj_x' }, /^unknown field "project_id" is not allowed$/],
  ] as const) {
    it(`rejects ${what}`, () => {
      assert.match(rejection(revocationRequestSchema, body), message);
    });
  }
});

describe('parseJsonBody', () => {
  it('parses JSON bytes', () => {
    assert.deepEqual(parseJsonBody(Buffer.from('{"a":[1]}')), { a: [1] });
  });
  it('rejects an absent or empty body', () => {
    for (const raw of [undefined, '', Buffer.alloc(0)]) {
      assert.throws(() => parseJsonBody(raw), { code: 'invalid_request', message: 'the request body must be a JSON object' });
    }
  });
  it('rejects invalid JSON without echoing it', () => {
    assert.throws(() => parseJsonBody('{"secret":'), (err: unknown) =>
      err instanceof ApiError && err.code === 'invalid_request' && err.message === 'the request body is not valid JSON');
  });
});

// Property tests: whatever the body, validation and policy only ever end in a value or an ApiError.
const CREDENTIALS = fc.record({
  publisher: fc.boolean(), subscriber: fc.boolean(), maxTtlSeconds: fc.integer({ min: 1, max: 3600 }),
}) satisfies fc.Arbitrary<CredentialPolicy>;

/** Bodies that satisfy every rule of docs/reference/token-api.md, "Request rules" (scopes aside). */
const validBody = validTokenBody({ services: true });

const mutation: fc.Arbitrary<BodyMutation> = fc.oneof(
  dropField,
  setField(fc.jsonValue()),
  defineField(fc.string({ maxLength: 20 }), fc.jsonValue()),
  setStreams(fc.oneof(fc.integer(), fc.double(), fc.jsonValue())),
);

/** Runs validation and policy like the token API does; a value or an ApiError, never anything else. */
function run(body: unknown, cred: CredentialPolicy): { ok: true; grant: ReturnType<typeof applyTokenPolicy> } | { ok: false; err: ApiError } {
  try {
    return { ok: true, grant: applyTokenPolicy(validate(tokenRequestSchema, body), cred) };
  } catch (err) {
    assert.ok(err instanceof ApiError, `only ApiError is thrown, got ${String(err)}`);
    assert.ok(err.code === 'invalid_request' || err.code === 'scope_denied', err.code);
    assert.equal(err.status, err.code === 'invalid_request' ? 400 : 403);
    assert.ok(err.message.length > 0 && err.message.length < 300, 'a short message');
    return { ok: false, err };
  }
}

/** What every accepted request satisfies, checked independently of the schema. */
function assertGrantObeysRules(body: Record<string, unknown>, grant: ReturnType<typeof applyTokenPolicy>, cred: CredentialPolicy): void {
  assert.ok(Object.keys(body).every((k) => TOKEN_FIELDS.includes(k)), 'no unknown field was accepted');
  assert.match(grant.room_id, ID);
  assert.match(grant.user_id, ID);
  assert.ok((TOKEN_ROLES as readonly string[]).includes(grant.role));
  for (const [list, max] of [[grant.publish_streams, 8], [grant.subscribe_streams, 32]] as const) {
    assert.ok(list.length <= max);
    assert.equal(new Set(list).size, list.length);
    assert.ok(list.every((id) => Number.isInteger(id) && id >= 1 && id <= 4294967295));
  }
  assert.ok(Number.isInteger(grant.ttl_seconds) && grant.ttl_seconds >= 1 && grant.ttl_seconds <= Math.min(3600, cred.maxTtlSeconds));
  assert.ok(!(grant.subscribe_room && body['subscribe_streams'] !== undefined));
  assert.ok(!(grant.role === 'audience' && grant.publish_streams.length > 0));
  if (grant.publish_streams.length > 0) assert.ok(cred.publisher);
  if (grant.subscribe_streams.length > 0 || grant.subscribe_room) assert.ok(cred.subscriber);
}

describe('validate + applyTokenPolicy (properties)', () => {
  it('accepts every valid body on a credential with both scopes and the full lifetime', () => {
    fc.assert(fc.property(validBody, (body) => {
      const result = run(body, { publisher: true, subscriber: true, maxTtlSeconds: 3600 });
      assert.ok(result.ok, result.ok ? '' : result.err.message);
      assert.equal(result.grant.room_id, body['room_id']);
      assert.deepEqual(result.grant.publish_streams, body['publish_streams'] ?? []);
      assert.deepEqual(result.grant.subscribe_streams, body['subscribe_streams'] ?? []);
      assert.equal(result.grant.ttl_seconds, body['ttl_seconds'] ?? 600);
    }), { numRuns: 300, includeErrorInReport: true });
  });

  it('ends mutated valid bodies in a grant that obeys every rule or in an ApiError', () => {
    fc.assert(fc.property(validBody, fc.array(mutation, { minLength: 1, maxLength: 3 }), CREDENTIALS, (body, mutations, cred) => {
      const mutated = mutations.reduce((b, m) => m(b), body);
      const result = run(mutated, cred);
      if (result.ok) assertGrantObeysRules(mutated, result.grant, cred);
    }), { numRuns: 1000, includeErrorInReport: true });
  });

  it('ends arbitrary JSON values in an ApiError or an obedient grant', () => {
    fc.assert(fc.property(fc.oneof(fc.jsonValue(), fc.dictionary(fc.string(), fc.jsonValue())), CREDENTIALS, (body, cred) => {
      const result = run(body, cred);
      if (result.ok) assertGrantObeysRules(body as Record<string, unknown>, result.grant, cred);
    }), { numRuns: 500, includeErrorInReport: true });
  });

  it('ends arbitrary JavaScript values (null prototypes, boxed values, sparse arrays) in an ApiError', () => {
    const anything = fc.anything({
      withNullPrototype: true, withBoxedValues: true, withSparseArray: true, withObjectString: true, withBigInt: true,
      withDate: true, withMap: true, withSet: true, withTypedArray: true,
    });
    fc.assert(fc.property(anything, CREDENTIALS, (body, cred) => {
      const result = run(body, cred);
      if (result.ok) assertGrantObeysRules(body as Record<string, unknown>, result.grant, cred);
    }), { numRuns: 500, includeErrorInReport: true });
  });

  it('ends any text parsed as a body in an ApiError or an obedient grant', () => {
    fc.assert(fc.property(fc.oneof(fc.string(), fc.json()), CREDENTIALS, (text, cred) => {
      try {
        const result = run(parseJsonBody(text), cred);
        if (result.ok) assertGrantObeysRules(JSON.parse(text) as Record<string, unknown>, result.grant, cred);
      } catch (err) {
        assert.ok(err instanceof ApiError && err.code === 'invalid_request', String(err));
      }
    }), { numRuns: 500, includeErrorInReport: true });
  });
});
