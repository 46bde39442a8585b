/** Paths no route takes, sent over real sockets to every HTTP host of the platform (served in this process): the documented error format, never the path echoed at length. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isErrorCode } from '@rtc/protocol';
import { request } from '../../../test/helpers/http.ts';
import { serveInProcess, type ServedPlatform } from '../../../test/helpers/serve-inproc.ts';

describe('paths the router cannot take, on every HTTP host, over sockets', () => {
  let server: ServedPlatform;
  before(async () => {
    server = await serveInProcess({ roles: ['api', 'token', 'signaling'] });
  });
  after(async () => {
    await server.stop();
  });

  const long = 'a'.repeat(5000);
  const cases = [
    { hosts: ['api', 'token', 'signaling'], path: '/v1/rtc/rooms/%ZZ', status: 400, error: 'invalid_request' },
    { hosts: ['api', 'token', 'signaling'], path: '/v1/projects/%ZZ', status: 400, error: 'invalid_request' },
    { hosts: ['api', 'token'], path: `/v1/rtc/rooms/${long}`, status: 414, error: 'invalid_request' },
    { hosts: ['api'], path: `/v1/projects/${long}`, status: 414, error: 'invalid_request' },
    // no route at all: not_found, naming the path only in part
    { hosts: ['api', 'token', 'signaling'], path: `/v1/${long}`, status: 404, error: 'not_found' },
    { hosts: ['signaling'], path: `/v1/signaling/${long}`, status: 404, error: 'not_found' },
  ] as const;

  for (const c of cases) {
    for (const host of c.hosts) {
      it(`answers GET ${c.path.slice(0, 30)}… (${c.path.length} characters) on ${host} with ${c.status} ${c.error}`, async () => {
        const res = await request(`${server.urls[host]}${c.path}`);
        assert.equal(res.status, c.status, res.text.slice(0, 300));
        assert.match(String(res.headers['content-type']), /^application\/json/);
        const body = res.json<{ error: string; message: string }>();
        assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
        assert.equal(body.error, c.error);
        assert.ok(isErrorCode(body.error), 'a code of the closed list');
        assert.ok(body.message.length <= 160, `a short message: ${body.message.length} characters`);
        assert.doesNotMatch(body.message, /a{101}|%ZZ/);
        assert.doesNotMatch(res.text, /FST_ERR/);
        assert.equal(res.headers['cache-control'], 'no-store');
        assert.match(String(res.headers['x-request-id']), /.+/);
      });
    }
  }

  it('still names a short unknown path in full', async () => {
    const res = await request(`${server.api}/v1/nothing-here`);
    assert.equal(res.status, 404);
    assert.deepEqual(res.json(), { error: 'not_found', message: 'no route for GET /v1/nothing-here' });
  });
});
