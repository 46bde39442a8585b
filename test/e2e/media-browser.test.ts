import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { TokenResponse } from '@rtc/protocol';
import type * as AppSdk from '../../sdk/app/src/index.ts';
import type { LocalStream, MediaSession } from '../../sdk/app/src/index.ts';
import { bundleSdk, launchChromium, servePages, type PageSite } from '../helpers/browser.ts';
import { startServer, type RunningServer } from '../helpers/platform.ts';
import { TokenIssuer, collectFrames, join, nextEvent, text, until } from '../helpers/media-session.ts';
import { MEDIA_ROLES } from '../helpers/media-platform.ts';

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>rtc app sdk</title></head>
<body><script type="module">
import * as sdk from './sdk.js';
globalThis.rtcPage = { sdk, session: undefined, stream: undefined, frames: [], revoked: undefined, disconnected: undefined };
</script></body></html>
`;

/** What the page keeps on `globalThis.rtcPage`: the bundled SDK and what its session saw. */
interface PageState {
  readonly sdk: typeof AppSdk;
  session: MediaSession | undefined;
  stream: LocalStream | undefined;
  readonly frames: string[];
  revoked: { readonly code: string; readonly closeCode: number | undefined } | undefined;
  disconnected: { readonly code: number; readonly willReconnect: boolean } | undefined;
}

describe('app SDK in a browser (Chromium, WebSocket and WebCrypto of the page)', () => {
  let server: RunningServer | undefined;
  let issuer: TokenIssuer;
  let site: PageSite | undefined;
  let browser: Browser | undefined;
  let page: Page;
  const sessions: MediaSession[] = [];

  before(async () => {
    server = await startServer({
      roles: MEDIA_ROLES,
      env: { RTC_APP_RATE_LIMIT_PER_MINUTE: '100000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '100000', RTC_LOG_LEVEL: 'info' },
    });
    const api = server.api;
    issuer = await TokenIssuer.create(() => api);

    site = await servePages({
      '/': ['text/html; charset=utf-8', PAGE],
      '/sdk.js': ['text/javascript; charset=utf-8', await bundleSdk()],
    });
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(site.url);
    await page.waitForFunction(() => (globalThis as unknown as { rtcPage?: unknown }).rtcPage !== undefined);
  });

  after(async () => {
    for (const s of sessions) await s.close();
    await browser?.close();
    await site?.close();
    await server?.stop();
  });

  it('exchanges sealed frames with a Node participant, then ends on revocation (4003)', async () => {
    const browserToken: TokenResponse = await issuer.issue({
      room_id: 'browser-room', user_id: 'browser-user', role: 'speaker', publish_streams: [1], subscribe_room: true,
    });
    const nodeToken: TokenResponse = await issuer.issue({
      room_id: 'browser-room', user_id: 'node-user', role: 'speaker', publish_streams: [2], subscribe_room: true,
    });

    // the page runs the bundle with its own WebSocket and crypto.subtle: the SDK gets no WebSocket option
    const joined = await page.evaluate(async (token) => {
      const state = (globalThis as unknown as { rtcPage: PageState }).rtcPage;
      const secureContext = (globalThis as unknown as { isSecureContext: boolean }).isSecureContext;
      const hasWebSocket = typeof (globalThis as unknown as { WebSocket?: unknown }).WebSocket === 'function';
      const hasSubtle = typeof globalThis.crypto?.subtle?.importKey === 'function';
      const session = await state.sdk.connect({ token, secure: false, reconnect: false });
      state.session = session;
      session.on('frame', (f) => {
        state.frames.push(`${f.streamId}:${new TextDecoder().decode(f.payload)}`);
      });
      session.on('revoked', (e) => {
        state.revoked = { code: e.error.code, closeCode: e.error.closeCode };
      });
      session.on('disconnected', (d) => {
        state.disconnected = { code: d.code, willReconnect: d.willReconnect };
      });
      return { state: session.state, secureContext, hasWebSocket, hasSubtle };
    }, browserToken);
    assert.deepEqual(joined, { state: 'connected', secureContext: true, hasWebSocket: true, hasSubtle: true });

    const node = await join(nodeToken, { reconnect: false });
    sessions.push(node);
    const nodeGot = collectFrames(node);

    // browser to Node
    await page.evaluate(async () => {
      const state = (globalThis as unknown as { rtcPage: PageState }).rtcPage;
      state.stream = await state.session!.publish(1, 'audio');
    });
    await until(() => node.streams().some((s) => s.streamId === 1 && s.subscribed && s.userId === 'browser-user'), 5000, 'browser stream at the Node participant');
    await page.evaluate(async () => {
      const state = (globalThis as unknown as { rtcPage: PageState }).rtcPage;
      for (let i = 0; i < 3; i++) await state.stream!.send(new TextEncoder().encode(`from browser ${i}`));
    });
    await until(() => nodeGot.frames.length === 3, 5000, 'frames from the browser');
    assert.deepEqual(nodeGot.texts(), ['1:from browser 0', '1:from browser 1', '1:from browser 2']);
    assert.ok(nodeGot.frames.every((f) => f.userId === 'browser-user' && f.kind === 'audio'));

    // Node to browser
    const mic = await node.publish(2, 'video');
    await page.waitForFunction(
      () => (globalThis as unknown as { rtcPage: PageState }).rtcPage.session!.streams().some((s) => s.streamId === 2 && s.subscribed),
      undefined, { timeout: 5000 });
    for (let i = 0; i < 3; i++) await mic.send(text(`from node ${i}`));
    await page.waitForFunction(() => (globalThis as unknown as { rtcPage: PageState }).rtcPage.frames.length === 3, undefined, { timeout: 5000 });
    assert.deepEqual(await page.evaluate(() => (globalThis as unknown as { rtcPage: PageState }).rtcPage.frames), ['2:from node 0', '2:from node 1', '2:from node 2']);

    // revocation of the browser's token ends its session
    const nodeSeesLeave = nextEvent(node, 'participantLeft', 5000, (p) => p.userId === 'browser-user');
    await issuer.revoke(browserToken);
    await page.waitForFunction(() => (globalThis as unknown as { rtcPage: PageState }).rtcPage.disconnected !== undefined, undefined, { timeout: 5000 });
    const ended = await page.evaluate(() => {
      const state = (globalThis as unknown as { rtcPage: PageState }).rtcPage;
      return { revoked: state.revoked, disconnected: state.disconnected, state: state.session!.state };
    });
    assert.deepEqual(ended, { revoked: { code: 'revoked', closeCode: 4003 }, disconnected: { code: 4003, willReconnect: false }, state: 'closed' });
    assert.equal((await nodeSeesLeave).userId, 'browser-user');
    assert.equal(node.state, 'connected');
  });
});
