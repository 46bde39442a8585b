import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { createCustomer } from '../../../test/helpers/customer.ts';

import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

const PUBLIC_PATHS = [
  '/v1/public/platform/catalog',
  '/v1/public/pricing/plans',
  '/v1/public/pricing/rates',
  '/v1/public/pricing/discount',
  '/v1/public/pricing/currencies',
  '/v1/public/marketplace/categories',
  '/v1/public/marketplace/extensions',
  '/v1/public/marketplace/extensions?category=moderation&limit=2',
  '/v1/openapi.json',
] as const;

interface Catalog {
  catalog_version: string;
  regions: { id: string; media_hosts: { host: string; port: number }[] }[];
  roles: { role: string; may_publish: boolean; may_subscribe: boolean; description: string }[];
  codecs: { audio: { name: string; mime_type: string }[]; video: { name: string; mime_type: string }[] };
  encryption: string[];
  limits: {
    token_api: Record<string, number>;
    token_request: Record<string, number>;
    revocation_effect_seconds: number;
  };
  token_lifetimes: Record<string, number>;
}

describe('public API: platform catalog and HTTP caching', () => {
  let server: InProcessPlatform;

  before(async () => {
    server = await startInProcess();
  });
  after(async () => {
    await server.close();
  });

  it('lists the token API limits and the token lifetimes', async () => {
    const res = await server.request(`${server.api}/v1/public/platform/catalog`);
    assert.equal(res.status, 200, res.text);
    const catalog = res.json<Catalog>();
    assert.deepEqual(catalog.limits, {
      token_api: {
        requests_per_minute_per_app_id: 1200, requests_per_minute_per_address: 2400,
        failed_authentications_per_address: 20, failed_authentication_window_seconds: 300, max_request_body_bytes: 8192,
      },
      token_request: { id_min_length: 1, id_max_length: 128, max_publish_streams: 8, max_subscribe_streams: 32, max_stream_id: 4294967295 },
      revocation_effect_seconds: 1,
    });
    assert.deepEqual(catalog.token_lifetimes, {
      default_ttl_seconds: 600, max_ttl_seconds: 3600, temporary_token_max_ttl_seconds: 600,
      console_access_token_seconds: 900, console_refresh_token_seconds: 2592000,
    });
    assert.deepEqual(catalog.encryption, ['aes-256-gcm']);
  });

  it('lists the five roles and what each may do: the audience never publishes', async () => {
    const catalog = (await server.request(`${server.api}/v1/public/platform/catalog`)).json<Catalog>();
    assert.deepEqual(catalog.roles.map((r) => r.role), ['host', 'cohost', 'speaker', 'participant', 'audience']);
    for (const role of catalog.roles) {
      assert.equal(role.may_publish, role.role !== 'audience', role.role);
      assert.equal(role.may_subscribe, true, role.role);
      assert.ok(role.description.length > 0);
    }
  });

  it('lists codecs by MIME type, Opus for audio and the WebCodecs video codecs', async () => {
    const catalog = (await server.request(`${server.api}/v1/public/platform/catalog`)).json<Catalog>();
    assert.deepEqual(catalog.codecs.audio.map((c) => c.mime_type), ['audio/opus']);
    assert.deepEqual(catalog.codecs.video.map((c) => c.mime_type), ['video/VP8', 'video/VP9', 'video/H264', 'video/AV1']);
  });

  it('names the media host that token responses point at', async () => {
    const customer = await createCustomer(server);
    const token = await server.request(`${server.api}/v1/rtc/tokens`, {
      headers: { authorization: customer.auth }, body: { room_id: 'r1', user_id: 'u1', role: 'host' },
    });
    assert.equal(token.status, 200, token.text);
    const { media } = token.json<TokenResponse>();
    const catalog = (await server.request(`${server.api}/v1/public/platform/catalog`)).json<Catalog>();
    assert.equal(catalog.regions.length, 1);
    assert.deepEqual(catalog.regions[0]!.media_hosts, [{ host: media.sfu_host, port: media.sfu_port }]);
  });

  for (const path of PUBLIC_PATHS) {
    describe(`GET ${path}`, () => {
      it('is public and cacheable: Cache-Control public, a strong ETag, open to browsers, no login', async () => {
        const first = await server.request(`${server.api}${path}`);
        assert.equal(first.status, 200, first.text);
        assert.equal(first.headers['cache-control'], 'public, max-age=300');
        assert.match(String(first.headers['etag']), /^"[A-Za-z0-9_-]{43}"$/);
        assert.equal(first.headers['access-control-allow-origin'], '*');
        assert.match(String(first.headers['content-type']), /^application\/json/);
        const again = await server.request(`${server.api}${path}`);
        assert.equal(again.headers['etag'], first.headers['etag'], 'the same document has the same tag');
        assert.equal(again.text, first.text);
      });

      it('answers 304 without a body to a matching If-None-Match, in every accepted form', async () => {
        const etag = String((await server.request(`${server.api}${path}`)).headers['etag']);
        for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
          const res = await server.request(`${server.api}${path}`, { headers: { 'if-none-match': header } });
          assert.equal(res.status, 304, header);
          assert.equal(res.text, '');
          assert.equal(res.headers['etag'], etag);
          assert.equal(res.headers['cache-control'], 'public, max-age=300');
        }
        const stale = await server.request(`${server.api}${path}`, { headers: { 'if-none-match': '"stale"' } });
        assert.equal(stale.status, 200);
        assert.ok(stale.text.length > 0);
      });

      it('answers HEAD with the same headers and no body', async () => {
        const get = await server.request(`${server.api}${path}`);
        const head = await server.request(`${server.api}${path}`, { method: 'HEAD' });
        assert.equal(head.status, 200);
        assert.equal(head.text, '');
        assert.equal(head.headers['etag'], get.headers['etag']);
      });

      it('refuses an unknown query parameter with 400 naming it, never cached', async () => {
        const sep = path.includes('?') ? '&' : '?';
        const res = await server.request(`${server.api}${path}${sep}debug=1`);
        assert.equal(res.status, 400);
        assert.deepEqual(res.json(), { error: 'invalid_request', message: 'unknown query parameter "debug" is not allowed' });
        assert.equal(res.headers['cache-control'], 'no-store');
        assert.equal(res.headers['etag'], undefined);
      });
    });
  }

  it('serves the public API on the api host only', async () => {
    const res = await server.request(`${server.token}/v1/public/pricing/plans`);
    assert.equal(res.status, 404);
  });
});
