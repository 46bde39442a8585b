import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import type { SessionBody } from '../../test/helpers/customer.ts';
import { basic, freshAddress, request, type HttpResult, type RequestOptions } from '../../test/helpers/http.ts';
import { serveInProcess, type ServedPlatform } from '../../test/helpers/serve-inproc.ts';

interface CredentialBody { app_id: string; app_secret: string }

/**
 * One full customer flow against the platform logging at `trace` through the production logger;
 * afterwards everything it wrote (role lines and log lines) is searched for every secret the flow
 * handled.
 */
describe('logs at trace level: no secret, and a request id for every response', () => {
  let server: ServedPlatform;
  let output = '';
  const secrets = new Map<string, string>();
  const responses: { what: string; res: HttpResult }[] = [];

  const keep = (what: string, value: string | undefined): void => {
    assert.ok(value !== undefined && value.length >= 8, `${what} is missing`);
    secrets.set(what, value);
  };
  const send = async (what: string, url: string, options: RequestOptions = {}): Promise<HttpResult> => {
    const res = await request(url, options);
    responses.push({ what, res });
    const authorization = options.headers?.['authorization'];
    if (authorization !== undefined) {
      keep(`Authorization header of ${what}`, authorization);
      keep(`credentials of the Authorization header of ${what}`, authorization.slice(authorization.indexOf(' ') + 1));
    }
    return res;
  };
  const expect = (res: HttpResult, status: number, what: string): HttpResult => {
    assert.equal(res.status, status, `${what}: ${res.text}`);
    return res;
  };

  before(async () => {
    server = await serveInProcess({ env: { RTC_LOG_LEVEL: 'trace' } });
    const api = server.api;
    const email = `logs-${randomBytes(4).toString('hex')}@example.test`;
    const password = `pw-${randomBytes(12).toString('base64url')}`;
    const wrongPassword = `wrong-${randomBytes(12).toString('base64url')}`;
    keep('password', password);
    keep('wrong password', wrongPassword);

    const reg = expect(await send('register', `${api}/v1/auth/register`, { body: { email, password } }), 201, 'register');
    keep('refresh token of register', reg.json<SessionBody>().refresh_token);
    keep('access token of register', reg.json<SessionBody>().access_token);
    expect(await send('login with a wrong password', `${api}/v1/auth/login`, { body: { email, password: wrongPassword } }), 401, 'bad login');
    const signedIn = expect(await send('login', `${api}/v1/auth/login`, { body: { email, password } }), 200, 'login');
    keep('refresh token of login', signedIn.json<SessionBody>().refresh_token);
    const refreshed = expect(await send('refresh', `${api}/v1/auth/refresh`, {
      body: { refresh_token: signedIn.json<SessionBody>().refresh_token },
    }), 200, 'refresh');
    const session = refreshed.json<SessionBody>();
    keep('refresh token of refresh', session.refresh_token);
    keep('access token of refresh', session.access_token);
    const auth = { authorization: `Bearer ${session.access_token}` };
    const second = expect(await send('refresh of the registration pair', `${api}/v1/auth/refresh`, {
      body: { refresh_token: reg.json<SessionBody>().refresh_token },
    }), 200, 'refresh of the registration pair').json<SessionBody>();
    keep('refresh token of the second family', second.refresh_token);
    expect(await send('refresh token reuse', `${api}/v1/auth/refresh`, {
      body: { refresh_token: reg.json<SessionBody>().refresh_token },
    }), 401, 'refresh token reuse');

    const project = expect(await send('create project', `${api}/v1/projects`, { headers: auth, body: { name: 'logs' } }), 201, 'project');
    const projectId = project.json<{ id: string }>().id;
    const created = expect(await send('create credential', `${api}/v1/projects/${projectId}/credentials`, {
      headers: auth, body: { scopes: ['publisher', 'subscriber'], ip_allowlist: ['127.0.0.0/8'] },
    }), 201, 'credential').json<CredentialBody>();
    const appId = created.app_id;
    keep('App Secret at creation', created.app_secret);
    keep('base64 of app:secret at creation', Buffer.from(`${appId}:${created.app_secret}`).toString('base64'));
    const rotated = expect(await send('rotate credential', `${api}/v1/projects/${projectId}/credentials/${appId}/rotate`, {
      method: 'POST', headers: auth,
    }), 200, 'rotate').json<CredentialBody>();
    keep('App Secret after rotation', rotated.app_secret);
    keep('base64 of app:secret after rotation', Buffer.from(`${appId}:${rotated.app_secret}`).toString('base64'));
    // a webhook endpoint: the events below are recorded for it and attempted while the server runs
    const hook = expect(await send('create webhook', `${api}/v1/projects/${projectId}/webhooks`, {
      headers: auth, body: { url: 'https://203.0.113.10/hook' },
    }), 201, 'webhook').json<{ id: string; secret: string }>();
    keep('webhook secret at creation', hook.secret);
    keep('webhook secret after rotation', expect(await send('rotate webhook secret',
      `${api}/v1/projects/${projectId}/webhooks/${hook.id}/rotate-secret`, { method: 'POST', headers: auth }), 200, 'rotate webhook')
      .json<{ secret: string }>().secret);
    expect(await send('test webhook', `${api}/v1/projects/${projectId}/webhooks/${hook.id}/test`, { method: 'POST', headers: auth }),
      202, 'test webhook');

    const handles: string[] = [];
    for (const host of [server.api, server.token]) {
      const t = expect(await send(`token on ${host}`, `${host}/v1/rtc/tokens`, {
        headers: { authorization: basic(appId, rotated.app_secret) },
        body: { room_id: 'room-logs', user_id: 'user-logs', role: 'host', publish_streams: [1], subscribe_room: true },
      }), 200, 'token').json<TokenResponse>();
      keep(`media key from ${host}`, t.media.key);
      handles.push(t.media.revocation_handle);
    }
    const shortForm = expect(await send('token service', `${server.token}/v1/tokens`, {
      headers: { authorization: basic(appId, rotated.app_secret) },
      body: { app_id: appId, user_id: 'user-logs', room_id: 'room-logs', role: 'speaker', ttl_sec: 60 },
    }), 200, 'token service').json<TokenResponse>();
    keep('media key from POST /v1/tokens', shortForm.media.key);

    // failures: old secret, a made-up secret, an unknown App ID, a secret in a malformed header
    const address = freshAddress();
    for (const [what, header] of [
      ['the old secret', basic(appId, created.app_secret)],
      ['a made-up secret', basic(appId, `sk_${randomBytes(32).toString('base64url')}`)],
      ['an unknown App ID', basic(`app_${randomBytes(16).toString('base64url')}`, rotated.app_secret)],
      ['a secret without its App ID', `Basic ${Buffer.from(rotated.app_secret).toString('base64')}`],
    ] as const) {
      expect(await send(`token with ${what}`, `${server.token}/v1/rtc/tokens`, {
        headers: { authorization: header }, body: { room_id: 'r', user_id: 'u', role: 'host' }, localAddress: address,
      }), 401, what);
    }
    expect(await send('token from a browser', `${server.api}/v1/rtc/tokens`, {
      headers: { authorization: basic(appId, rotated.app_secret), origin: 'https://app.example.com' },
      body: { room_id: 'r', user_id: 'u', role: 'host' },
    }), 403, 'origin');
    expect(await send('token with an invalid body', `${server.api}/v1/rtc/tokens`, {
      headers: { authorization: basic(appId, rotated.app_secret) }, body: { room_id: 'r', user_id: 'u', role: 'host', secret: rotated.app_secret },
    }), 400, 'invalid body');

    expect(await send('revoke a grant', `${server.token}/v1/rtc/tokens/revoke`, {
      headers: { authorization: basic(appId, rotated.app_secret) }, body: { revocation_handle: handles[0] },
    }), 200, 'revoke grant');
    const temp = expect(await send('temporary token', `${api}/v1/projects/${projectId}/temporary-token`, {
      headers: auth, body: { room_id: 'room-logs', user_id: 'console', role: 'host' },
    }), 200, 'temporary token').json<TokenResponse>();
    keep('media key of the temporary token', temp.media.key);
    expect(await send('revoke credential', `${api}/v1/projects/${projectId}/credentials/${appId}/revoke`, {
      method: 'POST', headers: auth,
    }), 200, 'revoke credential');
    expect(await send('token with a revoked credential', `${server.api}/v1/rtc/tokens`, {
      headers: { authorization: basic(appId, rotated.app_secret) }, body: { room_id: 'r', user_id: 'u', role: 'host' },
    }), 401, 'revoked credential');
    expect(await send('malformed login body', `${api}/v1/auth/login`, {
      body: `{"email":"${email}","password":"${password}"`, headers: { 'content-type': 'application/json' },
    }), 400, 'malformed body');
    // requests the HTTP parser refuses: their raw bytes, headers included, must not reach the log
    for (const host of [server.api, server.token]) {
      for (const flaw of ['Bad Header Line\r\n', 'Content-Length: abc\r\n', `X-Filler: ${'a'.repeat(20_000)}\r\n`]) {
        const answer = await sendRaw(host, `POST /v1/rtc/tokens HTTP/1.1\r\nHost: x\r\n` +
          `Authorization: ${basic(appId, rotated.app_secret)}\r\n${flaw}\r\n`);
        assert.match(answer, /^HTTP\/1\.1 4\d\d /, answer);
      }
      const answer = await sendRaw(host, `POST /v1/auth/login HTTP/1.1\r\nHost: x\r\n` +
        `Authorization: Bearer ${session.access_token}\r\nBad Header Line\r\n\r\n`);
      assert.match(answer, /^HTTP\/1\.1 400 /, answer);
    }
    expect(await send('logout', `${api}/v1/auth/logout`, { method: 'POST', headers: auth }), 204, 'logout');
    expect(await send('account after logout', `${api}/v1/account`, { headers: auth }), 401, 'after logout');

    // the stored forms are no more loggable than the secrets themselves
    const keys = JSON.parse(readFileSync(join(server.dataDir, 'keys.json'), 'utf8')) as Record<string, unknown>;
    const hashKey = Buffer.from(String(keys['secret_hash_key']), 'base64url');
    keep('stored hash of the App Secret', createHmac('sha256', hashKey).update(rotated.app_secret).digest('base64url'));
    keep('secret hash key', String(keys['secret_hash_key']));
    keep('revocation handle key', String(keys['handle_key']));

    await server.stop();
    output = server.output();
  });
  after(async () => {
    await server.stop();
  });

  it('logged one line for every request of the flow', () => {
    const requestLines = output.split('\n').filter((l) => l.startsWith('{"level":') && l.includes('"msg":"request"'));
    assert.equal(requestLines.length, responses.length, output);
  });

  it('never writes a password, token, App Secret, media key or Authorization value', () => {
    const leaked = [...secrets].filter(([, value]) => output.includes(value)).map(([what]) => what);
    assert.deepEqual(leaked, []);
  });

  it('never writes the bytes of a secret as a JSON byte array', () => {
    const leaked = [...secrets]
      .filter(([, value]) => output.includes(Buffer.from(value).toJSON().data.slice(0, 16).join(',')))
      .map(([what]) => what);
    assert.deepEqual(leaked, []);
  });

  it('never writes the random part of an App Secret or token without its prefix', () => {
    const leaked = [...secrets]
      .filter(([, value]) => /^(sk|cs|rt)_/.test(value))
      .filter(([, value]) => output.includes(value.slice(3)))
      .map(([what]) => what);
    assert.deepEqual(leaked, []);
  });

  it('gives every response an x-request-id that the logs name', () => {
    const ids = new Set<string>();
    for (const { what, res } of responses) {
      const id = res.headers['x-request-id'];
      assert.equal(typeof id, 'string', `${what} has no x-request-id`);
      assert.match(String(id), /^req_[A-Za-z0-9_-]{16}$/, what);
      assert.ok(output.includes(`"reqId":"${String(id)}"`), `${what}: ${String(id)} is not in the logs`);
      ids.add(String(id));
    }
    assert.equal(ids.size, responses.length, 'request ids repeat');
  });
});

/** Writes raw bytes on a fresh connection and resolves with everything read until it closes. */
function sendRaw(base: string, text: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(text));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' || err.code === 'EPIPE'
      ? resolve(Buffer.concat(chunks).toString('utf8'))
      : reject(err)));
  });
}
