import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { createCustomer, type Customer } from '../../../test/helpers/customer.ts';
import { type HttpResult, sendChunked } from '../../../test/helpers/http.ts';
import { assertError } from '../../../test/helpers/assert.ts';
import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

const VALID = { room_id: 'room-1', user_id: 'user-1', role: 'speaker' } as const;

/** Sends `payload` with `Transfer-Encoding: chunked` (no Content-Length), in 1 KB chunks. */

/** A valid token request padded with JSON whitespace to exactly `size` bytes. */
function paddedBody(size: number): Buffer {
  const json = JSON.stringify(VALID);
  return Buffer.from(json.slice(0, -1) + ' '.repeat(size - json.length) + json.slice(-1));
}

describe('POST /v1/rtc/tokens: request validation (400 names the violated rule)', () => {
  let server: InProcessPlatform;
  let customer: Customer;
  let limited: Customer;

  const issue = (body: unknown, who: Customer = customer, headers: Record<string, string> = {}): Promise<HttpResult> =>
    server.request(`${server.api}/v1/rtc/tokens`, { headers: { authorization: who.auth, ...headers }, body });

  before(async () => {
    server = await startInProcess();
    customer = await createCustomer(server);
    limited = await createCustomer(server, { max_ttl_seconds: 300 });
  });
  after(async () => {
    await server.close();
  });

  describe('required fields', () => {
    for (const field of ['room_id', 'user_id', 'role'] as const) {
      it(`rejects a request without ${field}`, async () => {
        const rest = Object.fromEntries(Object.entries(VALID).filter(([k]) => k !== field));
        assertError(await issue(rest), 400, 'invalid_request', new RegExp(`^${field} is required$`));
      });
    }

    it('rejects an empty object, naming the first required field', async () => {
      assertError(await issue({}), 400, 'invalid_request', /^room_id is required$/);
    });

    it('rejects null for a required field', async () => {
      assertError(await issue({ ...VALID, user_id: null }), 400, 'invalid_request', /user_id must be a string/);
    });
  });

  describe('room_id and user_id format', () => {
    const RULE = /must be 1-128 printable ASCII characters without spaces/;
    const BAD: readonly (readonly [string, string])[] = [
      ['an empty string', ''],
      ['129 characters', 'a'.repeat(129)],
      ['a space', 'room 1'],
      ['a leading space', ' room'],
      ['a non-ASCII letter', 'raum-ü'],
      ['an emoji', 'room-🎧'],
      ['a control character', 'room\u0001'],
      ['a tab', 'room\t1'],
      ['a newline', 'room\n'],
      ['DEL', 'room\u007f'],
      ['a non-breaking space', 'room\u00a01'],
    ];
    for (const field of ['room_id', 'user_id'] as const) {
      for (const [what, value] of BAD) {
        it(`rejects ${field} with ${what}`, async () => {
          assertError(await issue({ ...VALID, [field]: value }), 400, 'invalid_request', new RegExp(`^${field} ${RULE.source}`));
        });
      }
      it(`rejects a ${field} that is not a string`, async () => {
        assertError(await issue({ ...VALID, [field]: 42 }), 400, 'invalid_request', new RegExp(`^${field} must be a string$`));
      });
      it(`accepts a ${field} of 128 printable characters and echoes it`, async () => {
        const value = '!~'.repeat(32) + 'a'.repeat(64);
        assert.equal(value.length, 128);
        const res = await issue({ ...VALID, [field]: value });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json<TokenResponse>()[field], value);
      });
      it(`accepts a one-character ${field}`, async () => {
        const res = await issue({ ...VALID, [field]: 'x' });
        assert.equal(res.status, 200, res.text);
      });
    }
  });

  describe('role', () => {
    for (const role of ['Host', 'admin', '', 'host ', 'publisher']) {
      it(`rejects role ${JSON.stringify(role)}`, async () => {
        assertError(await issue({ ...VALID, role }), 400, 'invalid_request',
          /^role must be one of host, cohost, speaker, participant, audience$/);
      });
    }
    it('rejects a role that is not a string', async () => {
      assertError(await issue({ ...VALID, role: 1 }), 400, 'invalid_request', /^role must be one of/);
    });
    for (const role of ['host', 'cohost', 'speaker', 'participant', 'audience']) {
      it(`accepts role ${role}`, async () => {
        const res = await issue({ ...VALID, role });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json<TokenResponse>().role, role);
      });
    }
  });

  describe('stream ids', () => {
    const RULE = 'must hold integer stream ids from 1 to 4294967295';
    for (const field of ['publish_streams', 'subscribe_streams'] as const) {
      for (const [what, id] of [['0', 0], ['a negative id', -1], ['a non-integer', 1.5], ['4294967296', 4294967296],
        ['a string', '1'], ['null', null], ['an object', {}]] as const) {
        it(`rejects ${field} holding ${what}`, async () => {
          assertError(await issue({ ...VALID, [field]: [1, id] }), 400, 'invalid_request', new RegExp(`^${field} ${RULE}$`));
        });
      }
      it(`accepts ${field} holding 4294967295`, async () => {
        const res = await issue({ ...VALID, [field]: [4294967295, 1] });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.json<TokenResponse>()[field], [4294967295, 1]);
      });
      it(`rejects ${field} that is not an array`, async () => {
        assertError(await issue({ ...VALID, [field]: 1 }), 400, 'invalid_request', new RegExp(`^${field} must be an array of stream ids$`));
      });
      it(`rejects ${field} repeating a stream id`, async () => {
        assertError(await issue({ ...VALID, [field]: [3, 4, 3] }), 400, 'invalid_request', new RegExp(`^${field} must not repeat a stream id$`));
      });
    }

    it('accepts 8 publish_streams', async () => {
      const ids = [1, 2, 3, 4, 5, 6, 7, 8];
      const res = await issue({ ...VALID, publish_streams: ids });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json<TokenResponse>().publish_streams, ids);
    });
    it('rejects 9 publish_streams', async () => {
      assertError(await issue({ ...VALID, publish_streams: [1, 2, 3, 4, 5, 6, 7, 8, 9] }), 400, 'invalid_request',
        /^publish_streams may list at most 8 stream ids$/);
    });
    it('accepts 32 subscribe_streams', async () => {
      const ids = Array.from({ length: 32 }, (_, i) => i + 1);
      const res = await issue({ ...VALID, subscribe_streams: ids });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json<TokenResponse>().subscribe_streams, ids);
    });
    it('rejects 33 subscribe_streams', async () => {
      assertError(await issue({ ...VALID, subscribe_streams: Array.from({ length: 33 }, (_, i) => i + 1) }), 400,
        'invalid_request', /^subscribe_streams may list at most 32 stream ids$/);
    });

    it('treats empty stream arrays like absent fields', async () => {
      const res = await issue({ ...VALID, publish_streams: [], subscribe_streams: [] });
      assert.equal(res.status, 200, res.text);
      const t = res.json<TokenResponse>();
      assert.deepEqual(t.publish_streams, []);
      assert.deepEqual(t.subscribe_streams, []);
      assert.equal(t.subscribe_room, false);
    });
    it('answers subscribe_streams as an empty array when none were requested', async () => {
      const res = await issue(VALID);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json<TokenResponse>().subscribe_streams, []);
      assert.deepEqual(res.json<TokenResponse>().publish_streams, []);
    });
  });

  describe('subscribe_room', () => {
    it('rejects subscribe_room with subscribe_streams', async () => {
      assertError(await issue({ ...VALID, subscribe_room: true, subscribe_streams: [1] }), 400, 'invalid_request',
        /subscribe_room cannot be combined with subscribe_streams/);
    });
    it('rejects subscribe_room with an empty subscribe_streams field', async () => {
      assertError(await issue({ ...VALID, subscribe_room: true, subscribe_streams: [] }), 400, 'invalid_request',
        /subscribe_room cannot be combined with subscribe_streams/);
    });
    it('grants subscribe_room alone', async () => {
      const res = await issue({ ...VALID, subscribe_room: true });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json<TokenResponse>().subscribe_room, true);
    });
    it('accepts subscribe_room: false with subscribe_streams', async () => {
      const res = await issue({ ...VALID, subscribe_room: false, subscribe_streams: [5] });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json<TokenResponse>().subscribe_room, false);
      assert.deepEqual(res.json<TokenResponse>().subscribe_streams, [5]);
    });
  });

  describe('audience', () => {
    it('rejects the audience role with publish_streams', async () => {
      assertError(await issue({ ...VALID, role: 'audience', publish_streams: [1] }), 400, 'invalid_request',
        /audience role cannot publish/);
    });
    it('accepts the audience role with an empty publish_streams', async () => {
      const res = await issue({ ...VALID, role: 'audience', publish_streams: [], subscribe_streams: [1] });
      assert.equal(res.status, 200, res.text);
    });
  });

  describe('ttl_seconds', () => {
    const lifetime = (res: HttpResult): number => {
      const t = res.json<TokenResponse>();
      return t.expires_at - t.issued_at;
    };
    for (const [what, ttl] of [['0', 0], ['a negative number', -5], ['1.5', 1.5], ['a string', '60'], ['null', null], ['true', true]] as const) {
      it(`rejects ttl_seconds ${what}`, async () => {
        assertError(await issue({ ...VALID, ttl_seconds: ttl }), 400, 'invalid_request', /^ttl_seconds must be an integer from 1 to 3600$/);
      });
    }
    it('rejects ttl_seconds 3601, naming the maximum', async () => {
      assertError(await issue({ ...VALID, ttl_seconds: 3601 }), 400, 'invalid_request', /^ttl_seconds must be at most 3600/);
    });
    it('defaults to 600 seconds', async () => {
      const res = await issue(VALID);
      assert.equal(res.status, 200, res.text);
      assert.equal(lifetime(res), 600);
    });
    for (const ttl of [1, 599, 3600]) {
      it(`grants exactly ttl_seconds ${ttl}`, async () => {
        const res = await issue({ ...VALID, ttl_seconds: ttl });
        assert.equal(res.status, 200, res.text);
        assert.equal(lifetime(res), ttl);
      });
    }
    it('rejects ttl_seconds above the credential limit, naming the limit (no capping)', async () => {
      assertError(await issue({ ...VALID, ttl_seconds: 301 }, limited), 400, 'invalid_request',
        /^ttl_seconds must be at most 300, the limit set on this credential$/);
    });
    it('rejects ttl_seconds 3600 on a credential limited to 300', async () => {
      assertError(await issue({ ...VALID, ttl_seconds: 3600 }, limited), 400, 'invalid_request', /at most 300/);
    });
    it('grants the credential limit itself', async () => {
      const res = await issue({ ...VALID, ttl_seconds: 300 }, limited);
      assert.equal(res.status, 200, res.text);
      assert.equal(lifetime(res), 300);
    });
    it('defaults to the credential limit when that is below 600', async () => {
      const res = await issue(VALID, limited);
      assert.equal(res.status, 200, res.text);
      assert.equal(lifetime(res), 300);
    });
  });

  describe('flags', () => {
    for (const field of ['subscribe_room', 'turn', 'signaling'] as const) {
      for (const value of ['true', 1, 0, null, [], {}]) {
        it(`rejects ${field}: ${JSON.stringify(value)}`, async () => {
          assertError(await issue({ ...VALID, [field]: value }), 400, 'invalid_request', new RegExp(`^${field} must be true or false$`));
        });
      }
    }
    it('accepts turn: false and signaling: false without adding either', async () => {
      const res = await issue({ ...VALID, turn: false, signaling: false });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json<TokenResponse>().turn, undefined);
      assert.equal(res.json<TokenResponse>().signaling, undefined);
    });
  });

  describe('unknown fields', () => {
    for (const field of ['foo', 'project_id', 'app_id', 'ttl', 'publishStreams', 'toString', 'hasOwnProperty']) {
      it(`rejects the unknown field ${field}, naming it`, async () => {
        assertError(await issue({ ...VALID, [field]: 'x' }), 400, 'invalid_request',
          new RegExp(`^unknown field "${field}" is not allowed$`));
      });
    }
    for (const field of ['__proto__', 'constructor']) {
      it(`rejects an own ${field} field, naming it`, async () => {
        // JSON.stringify would drop a __proto__ set through an object literal: write the JSON text by hand
        const text = `{"room_id":"r","user_id":"u","role":"host","${field}":{"publish_streams":[1]}}`;
        const res = await server.request(`${server.api}/v1/rtc/tokens`, {
          headers: { authorization: customer.auth, 'content-type': 'application/json' }, body: text,
        });
        assertError(res, 400, 'invalid_request', new RegExp(`^unknown field "${field}" is not allowed$`));
      });
    }
    it('cuts a very long unknown field name short in the message', async () => {
      const field = 'z'.repeat(500);
      const res = await issue({ ...VALID, [field]: 1 });
      assertError(res, 400, 'invalid_request', /^unknown field "z{64}…" is not allowed$/);
    });
  });

  describe('body syntax', () => {
    const raw = (text: string): Promise<HttpResult> => server.request(`${server.api}/v1/rtc/tokens`, {
      headers: { authorization: customer.auth, 'content-type': 'application/json' }, body: text,
    });
    for (const text of ['[]', '[{"room_id":"r","user_id":"u","role":"host"}]', 'null', '42', '"room"', 'true']) {
      it(`rejects the JSON body ${text.slice(0, 20)} that is not an object`, async () => {
        assertError(await raw(text), 400, 'invalid_request', /^the request body must be a JSON object$/);
      });
    }
    for (const text of ['{"room_id":', '{room_id: "r"}', "{'a':1}", '{"a":1}}', 'undefined', '\ufeff{}']) {
      it(`rejects the invalid JSON ${JSON.stringify(text)}`, async () => {
        assertError(await raw(text), 400, 'invalid_request', /^the request body is not valid JSON$/);
      });
    }
    it('rejects an empty application/json body', async () => {
      assertError(await raw(''), 400, 'invalid_request', /^the request body must be a JSON object$/);
    });
    it('rejects a request without a body', async () => {
      const res = await server.request(`${server.api}/v1/rtc/tokens`, { method: 'POST', headers: { authorization: customer.auth } });
      assertError(res, 400, 'invalid_request', /^the request body must be a JSON object$/);
    });
    it('accepts application/json with a charset parameter', async () => {
      const res = await server.request(`${server.api}/v1/rtc/tokens`, {
        headers: { authorization: customer.auth, 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(VALID),
      });
      assert.equal(res.status, 200, res.text);
    });
  });

  describe('body size (413) and media type (415)', () => {
    it('accepts a body of exactly 8192 bytes', async () => {
      const res = await server.request(`${server.api}/v1/rtc/tokens`, {
        headers: { authorization: customer.auth, 'content-type': 'application/json' }, body: paddedBody(8192),
      });
      assert.equal(res.status, 200, res.text);
    });
    it('answers 413 invalid_request to a Content-Length over 8192 bytes', async () => {
      const res = await server.request(`${server.api}/v1/rtc/tokens`, {
        headers: { authorization: customer.auth, 'content-type': 'application/json' }, body: paddedBody(8193),
      });
      assertError(res, 413, 'invalid_request', /exceeds 8192 bytes/);
    });
    it('answers 413 invalid_request to a chunked body over 8192 bytes', async () => {
      const res = await sendChunked(`${await server.listen('api')}/v1/rtc/tokens`,
        { authorization: customer.auth, 'content-type': 'application/json' }, paddedBody(20_000));
      assert.equal(res.status, 413, res.text);
      assert.deepEqual(JSON.parse(res.text), { error: 'invalid_request', message: 'the request body exceeds 8192 bytes' });
    });
    it('accepts a chunked body of 8192 bytes', async () => {
      const res = await sendChunked(`${await server.listen('api')}/v1/rtc/tokens`,
        { authorization: customer.auth, 'content-type': 'application/json' }, paddedBody(8192));
      assert.equal(res.status, 200, res.text);
    });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonp']) {
      it(`answers 415 invalid_request to Content-Type ${type}`, async () => {
        const res = await server.request(`${server.api}/v1/rtc/tokens`, {
          headers: { authorization: customer.auth, 'content-type': type }, body: JSON.stringify(VALID),
        });
        assertError(res, 415, 'invalid_request', /must be application\/json/);
      });
    }
    it('answers 415 invalid_request to a body without Content-Type', async () => {
      const res = await server.request(`${server.api}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body: JSON.stringify(VALID) });
      assertError(res, 415, 'invalid_request', /must be application\/json/);
    });
  });

  it('gives the same validation answers on the token host', async () => {
    const res = await server.request(`${server.token}/v1/rtc/tokens`, {
      headers: { authorization: customer.auth }, body: { ...VALID, publish_streams: [0] },
    });
    assertError(res, 400, 'invalid_request', /^publish_streams must hold integer stream ids from 1 to 4294967295$/);
  });
});
