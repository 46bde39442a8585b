import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TokenRequest } from '@rtc/protocol';
import { ApiError } from '../core/errors.ts';
import { applyTokenPolicy, type CredentialPolicy, type GrantRequest } from './policy.ts';

const BOTH: CredentialPolicy = { publisher: true, subscriber: true, maxTtlSeconds: 3600 };
const PUBLISHER: CredentialPolicy = { publisher: true, subscriber: false, maxTtlSeconds: 3600 };
const SUBSCRIBER: CredentialPolicy = { publisher: false, subscriber: true, maxTtlSeconds: 3600 };
const NONE: CredentialPolicy = { publisher: false, subscriber: false, maxTtlSeconds: 3600 };
const SHORT: CredentialPolicy = { publisher: true, subscriber: true, maxTtlSeconds: 300 };

const BASE: TokenRequest = { room_id: 'room', user_id: 'user', role: 'speaker' };

interface Rejection { readonly code: 'invalid_request' | 'scope_denied'; readonly message: RegExp }
interface Row {
  readonly rule: string;
  readonly req: Partial<TokenRequest>;
  readonly cred: CredentialPolicy;
  readonly expect: Partial<GrantRequest> | Rejection;
}

const isRejection = (e: Row['expect']): e is Rejection => 'code' in e;

// docs/reference/token-api.md, "Order of checks": cross-field rules (400) come before scopes (403)
const RULES: readonly Row[] = [
  { rule: 'grants a bare request with the defaults', req: {}, cred: NONE,
    expect: { room_id: 'room', user_id: 'user', role: 'speaker', publish_streams: [], subscribe_streams: [], subscribe_room: false, ttl_seconds: 600, turn: false, signaling: false } },
  { rule: 'defaults the lifetime to 600 seconds', req: {}, cred: BOTH, expect: { ttl_seconds: 600 } },
  { rule: 'defaults the lifetime to the credential limit when that is lower', req: {}, cred: SHORT, expect: { ttl_seconds: 300 } },
  { rule: 'grants the requested lifetime', req: { ttl_seconds: 3600 }, cred: BOTH, expect: { ttl_seconds: 3600 } },
  { rule: 'grants a lifetime equal to the credential limit', req: { ttl_seconds: 300 }, cred: SHORT, expect: { ttl_seconds: 300 } },
  { rule: 'rejects a lifetime above the credential limit, naming it', req: { ttl_seconds: 301 }, cred: SHORT,
    expect: { code: 'invalid_request', message: /^ttl_seconds must be at most 300, the limit set on this credential$/ } },
  { rule: 'grants publish_streams with the publisher scope', req: { publish_streams: [1, 2] }, cred: PUBLISHER, expect: { publish_streams: [1, 2] } },
  { rule: 'denies publish_streams without the publisher scope', req: { publish_streams: [1] }, cred: SUBSCRIBER,
    expect: { code: 'scope_denied', message: /publish_streams needs the publisher scope/ } },
  { rule: 'grants subscribe_streams with the subscriber scope', req: { subscribe_streams: [3] }, cred: SUBSCRIBER, expect: { subscribe_streams: [3] } },
  { rule: 'denies subscribe_streams without the subscriber scope', req: { subscribe_streams: [3] }, cred: PUBLISHER,
    expect: { code: 'scope_denied', message: /subscribe_streams needs the subscriber scope/ } },
  { rule: 'grants subscribe_room with the subscriber scope', req: { subscribe_room: true }, cred: SUBSCRIBER, expect: { subscribe_room: true, subscribe_streams: [] } },
  { rule: 'denies subscribe_room without the subscriber scope', req: { subscribe_room: true }, cred: PUBLISHER,
    expect: { code: 'scope_denied', message: /subscribe_room needs the subscriber scope/ } },
  { rule: 'needs no scope for empty stream lists', req: { publish_streams: [], subscribe_streams: [] }, cred: NONE, expect: { publish_streams: [], subscribe_streams: [] } },
  { rule: 'needs no scope for subscribe_room: false', req: { subscribe_room: false }, cred: NONE, expect: { subscribe_room: false } },
  { rule: 'rejects subscribe_room with subscribe_streams', req: { subscribe_room: true, subscribe_streams: [1] }, cred: BOTH,
    expect: { code: 'invalid_request', message: /^subscribe_room cannot be combined with subscribe_streams$/ } },
  { rule: 'rejects subscribe_room with an empty subscribe_streams', req: { subscribe_room: true, subscribe_streams: [] }, cred: BOTH,
    expect: { code: 'invalid_request', message: /^subscribe_room cannot be combined with subscribe_streams$/ } },
  { rule: 'accepts subscribe_room: false with subscribe_streams', req: { subscribe_room: false, subscribe_streams: [1] }, cred: BOTH,
    expect: { subscribe_room: false, subscribe_streams: [1] } },
  { rule: 'rejects the audience role with publish_streams', req: { role: 'audience', publish_streams: [1] }, cred: BOTH,
    expect: { code: 'invalid_request', message: /audience role cannot publish/ } },
  { rule: 'accepts the audience role with an empty publish_streams', req: { role: 'audience', publish_streams: [] }, cred: BOTH,
    expect: { role: 'audience', publish_streams: [] } },
  { rule: 'lets every other role publish', req: { role: 'participant', publish_streams: [9] }, cred: BOTH, expect: { role: 'participant', publish_streams: [9] } },
  { rule: 'carries turn and signaling through', req: { turn: true, signaling: true }, cred: NONE, expect: { turn: true, signaling: true } },
  { rule: 'checks the combination before the scope', req: { subscribe_room: true, subscribe_streams: [1] }, cred: NONE,
    expect: { code: 'invalid_request', message: /subscribe_room/ } },
  { rule: 'checks the audience rule before the scope', req: { role: 'audience', publish_streams: [1] }, cred: NONE,
    expect: { code: 'invalid_request', message: /audience/ } },
  { rule: 'checks the credential TTL limit before the scope', req: { publish_streams: [1], ttl_seconds: 301 },
    cred: { ...SHORT, publisher: false }, expect: { code: 'invalid_request', message: /at most 300/ } },
  { rule: 'checks the publisher scope before the subscriber scope', req: { publish_streams: [1], subscribe_streams: [2] }, cred: NONE,
    expect: { code: 'scope_denied', message: /publisher/ } },
];

describe('applyTokenPolicy', () => {
  for (const row of RULES) {
    it(row.rule, () => {
      const run = (): GrantRequest => applyTokenPolicy({ ...BASE, ...row.req }, row.cred);
      if (isRejection(row.expect)) {
        const expected = row.expect;
        assert.throws(run, (err: unknown) => {
          assert.ok(err instanceof ApiError);
          assert.equal(err.code, expected.code);
          assert.equal(err.status, expected.code === 'invalid_request' ? 400 : 403);
          assert.match(err.message, expected.message);
          return true;
        });
      } else {
        const grant = run();
        for (const [key, value] of Object.entries(row.expect)) {
          assert.deepEqual(grant[key as keyof GrantRequest], value, key);
        }
      }
    });
  }

  it('copies the stream lists rather than sharing them with the request', () => {
    const pub = [1, 2];
    const grant = applyTokenPolicy({ ...BASE, publish_streams: pub }, BOTH);
    assert.deepEqual(grant.publish_streams, pub);
    assert.notEqual(grant.publish_streams, pub);
  });
});
