import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isErrorCode } from '@rtc/protocol';
import { useInProcess } from '../helpers/inproc.ts';

describe('paths the router cannot take', () => {
  const server = useInProcess();
  const long = 'a'.repeat(5000);
  const cases = [
    { role: 'api', path: '/v1/rtc/rooms/%ZZ', status: 400 },
    { role: 'api', path: '/v1/projects/%ZZ', status: 400 },
    { role: 'token', path: '/v1/rtc/rooms/%ZZ/participants/x/remove', status: 400 },
    { role: 'api', path: `/v1/rtc/rooms/${long}`, status: 414 },
    { role: 'api', path: `/v1/projects/${long}/credentials`, status: 414 },
  ] as const;

  for (const c of cases) {
    it(`answers ${c.path.slice(0, 40)} on ${c.role} with ${c.status} in the documented format, without echoing it`, async () => {
      const platform = server();
      const res = await platform.request(`${platform.urls[c.role]}${c.path}`);
      assert.equal(res.status, c.status);
      const body = res.json<{ error: string; message: string }>();
      assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
      assert.equal(body.error, 'invalid_request');
      assert.ok(isErrorCode(body.error));
      assert.ok(!body.message.includes('%ZZ') && !body.message.includes('aaaa'), body.message);
      assert.ok(body.message.length < 120);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(String(res.headers['x-request-id']), /.+/);
      assert.doesNotMatch(res.text, /FST_ERR/);
    });
  }

  it('still routes well-formed escapes', async () => {
    const platform = server();
    const res = await platform.request(`${platform.urls.api}/v1/projects/prj_%41`);
    assert.equal(res.status, 401);
  });
});
