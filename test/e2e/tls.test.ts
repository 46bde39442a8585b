import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import { bearer, newLogin, type SessionBody } from '../helpers/customer.ts';
import { basic, request } from '../helpers/http.ts';
import { serveInProcess, type ServedPlatform } from '../helpers/serve-inproc.ts';
import { makeCertificate } from '../helpers/tls.ts';

describe('HTTPS with RTC_TLS_CERT_FILE and RTC_TLS_KEY_FILE', () => {
  let dir: string;
  let ca: Buffer;
  let server: ServedPlatform;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rtc-tls-'));
    const { certFile, keyFile } = makeCertificate(dir);
    ca = readFileSync(certFile);
    server = await serveInProcess({ env: { RTC_TLS_CERT_FILE: certFile, RTC_TLS_KEY_FILE: keyFile } });
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('announces https URLs on its role lines', () => {
    for (const role of ['api', 'token']) {
      assert.match(server.urls[role] ?? '', /^https:\/\/127\.0\.0\.1:\d+$/, role);
    }
    const lines = server.output().split('\n').filter((l) => l.startsWith('{"role":'));
    assert.equal(lines.length, 2, server.output());
    for (const line of lines) assert.match(line, /^\{"role":"(api|token)","url":"https:\/\/127\.0\.0\.1:\d+"\}$/);
  });

  it('serves the customer API and issues a token over HTTPS on both hosts', async () => {
    const { email, password } = newLogin();
    const reg = await request(`${server.api}/v1/auth/register`, { body: { email, password }, ca });
    assert.equal(reg.status, 201, reg.text);
    const auth = bearer(reg.json<SessionBody>().access_token);
    const project = await request(`${server.api}/v1/projects`, { headers: auth, body: { name: 'tls' }, ca });
    assert.equal(project.status, 201, project.text);
    const projectId = project.json<{ id: string }>().id;
    const cred = await request(`${server.api}/v1/projects/${projectId}/credentials`, { headers: auth, body: { scopes: ['publisher'] }, ca });
    assert.equal(cred.status, 201, cred.text);
    const { app_id: appId, app_secret: appSecret } = cred.json<{ app_id: string; app_secret: string }>();

    for (const host of [server.api, server.token]) {
      const res = await request(`${host}/v1/rtc/tokens`, {
        headers: { authorization: basic(appId, appSecret) }, body: { room_id: 'tls-room', user_id: 'tls-user', role: 'host' }, ca,
      });
      assert.equal(res.status, 200, res.text);
      const t = res.json<TokenResponse>();
      assert.equal(t.project_id, projectId);
      assert.equal(t.app_id, appId);
      assert.match(t.media.key, /^[A-Za-z0-9_-]{43}$/);
      const jwks = await request(`${host}/.well-known/jwks.json`, { ca });
      assert.equal(jwks.status, 200, jwks.text);
    }
  });

  it('refuses a client that does not trust the certificate', async () => {
    await assert.rejects(request(`${server.token}/health`), /self-signed|certificate/i);
  });

  it('does not speak plain HTTP on its ports', async () => {
    for (const url of [server.api, server.token]) {
      const plain = url.replace(/^https:/, 'http:');
      const outcome = await request(`${plain}/health`).then((res) => `status ${res.status}`, (err: Error) => `error ${err.message}`);
      // a TLS listener hangs up on plain HTTP; a refusal with a 4xx would do as well, never an answer
      assert.match(outcome, /^(error |status 4\d\d$)/, `${plain}: ${outcome}`);
    }
  });
});
