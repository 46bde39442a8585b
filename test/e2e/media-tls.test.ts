import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import type { TokenResponse } from '@rtc/protocol';
import { connect, type MediaSession } from '../../sdk/app/src/index.ts';
import { bearer, newLogin, type SessionBody } from '../helpers/customer.ts';
import { basic, request } from '../helpers/http.ts';
import { serveInProcess, type ServedPlatform } from '../helpers/serve-inproc.ts';
import { makeCertificate } from '../helpers/tls.ts';
import { collectFrames, text, until } from '../helpers/media-session.ts';

describe('media over wss when TLS is configured', () => {
  let dir: string;
  let ca: Buffer;
  let server: ServedPlatform;
  let auth: string;

  /** `ws` trusting the test's self-signed certificate (what a browser does with a real one). */
  class TrustingWebSocket extends WebSocket {
    constructor(url: string) {
      super(url, { ca });
    }
  }

  const issue = async (user: string, body: Record<string, unknown>): Promise<TokenResponse> => {
    const res = await request(`${server.api}/v1/rtc/tokens`, {
      headers: { authorization: auth }, body: { room_id: 'tls-room', user_id: user, role: 'speaker', ...body }, ca,
    });
    assert.equal(res.status, 200, res.text);
    return res.json<TokenResponse>();
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rtc-media-tls-'));
    const { certFile, keyFile } = makeCertificate(dir);
    ca = readFileSync(certFile);
    server = await serveInProcess({ roles: ['api', 'token', 'media'], env: { RTC_TLS_CERT_FILE: certFile, RTC_TLS_KEY_FILE: keyFile } });
    const login = newLogin();
    const reg = await request(`${server.api}/v1/auth/register`, { body: login, ca });
    const session = bearer(reg.json<SessionBody>().access_token);
    const project = await request(`${server.api}/v1/projects`, { headers: session, body: { name: 'tls' }, ca });
    const projectId = project.json<{ id: string }>().id;
    const cred = await request(`${server.api}/v1/projects/${projectId}/credentials`,
      { headers: session, body: { scopes: ['publisher', 'subscriber'] }, ca });
    const { app_id: appId, app_secret: appSecret } = cred.json<{ app_id: string; app_secret: string }>();
    auth = basic(appId, appSecret);
  });

  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('announces a wss URL and carries a session end to end (URL built from the token, wss by default)', async () => {
    assert.match(server.urls['media'] ?? '', /^wss:\/\/127\.0\.0\.1:\d+$/);
    const sessions: MediaSession[] = [];
    try {
      const alice = await connect({ token: await issue('alice', { publish_streams: [1] }), WebSocket: TrustingWebSocket });
      const bob = await connect({ token: await issue('bob', { subscribe_room: true }), WebSocket: TrustingWebSocket });
      sessions.push(alice, bob);
      const got = collectFrames(bob);
      const mic = await alice.publish(1, 'audio');
      await until(() => bob.streams().length === 1, 3000, 'stream seen');
      await mic.send(text('over tls'));
      await until(() => got.frames.length === 1, 3000, 'frame');
      assert.deepEqual(got.texts(), ['1:over tls']);
    } finally {
      for (const s of sessions) await s.close();
    }
  });

  it('refuses a plain ws connection on the TLS port', async () => {
    const plain = new WebSocket(server.urls['media']!.replace(/^wss:/, 'ws:') + '/v1/media');
    const outcome = await new Promise<string>((resolve) => {
      plain.on('error', (err) => resolve(`error ${err.message}`));
      plain.on('open', () => resolve('open'));
    });
    assert.match(outcome, /^error /);
  });
});
