/**
 * The console web page (docs/console.md) in headless Chromium, against a real `rtc serve`: what a
 * developer does in it, page by page, found the way a person finds things (roles, labels, text) and
 * checked through the public API it drives. Every page is photographed at desktop (1280 px) and
 * phone (390 px) width into .tmp/console-screenshots (not committed), and at 390 px no page scrolls sideways.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { joinAsGuest, launchChromium } from '../helpers/browser.ts';
import { request } from '../helpers/http.ts';
import type { RunningServer } from '../helpers/platform.ts';
import { DESKTOP, issueWithCredential, openConsolePage, PHONE, shots, signInAt, waitForHeading } from './console-helpers.ts';
import { join as joinMedia, text } from '../helpers/media-session.ts';
import { startMediaServer } from './media-server.ts';
import type { RtcRoom, TokenResponse } from '@rtc/protocol';

/** A project name with a long unbroken word, as real ones have: it must not widen a phone's page. */
const PROJECT = 'acme_video_prod_eu_west_1';
const HOOK = 'https://203.0.113.10/rtc-webhooks';

describe('console web page (Chromium)', () => {
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  const email = `console-${Date.now()}@example.test`;
  let password = 'a long console password';
  let projectUrl = '';
  let appId = '';
  let secret = '';

  before(async () => {
    server = await startMediaServer();
    browser = await launchChromium({ fakeMedia: true });
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  const newPage = (): Promise<{ context: BrowserContext; page: Page }> => openConsolePage(browser!);
  const nav = (page: Page, name: string): Promise<void> =>
    page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click();
  const heading = (page: Page, name: string): Promise<void> => waitForHeading(page, name);
  const signIn = (page: Page, path = '/'): Promise<void> => signInAt(page, `${server!.api}${path}`, email, password);
  const dialog = (page: Page, name: string): Locator => page.getByRole('alertdialog', { name, exact: true });
  const tokenWith = (id: string, key: string) => issueWithCredential(server!, id, key);

  it('walks through every page: sign up, project, credentials, overview, inspector, webhooks, rooms, usage, test room, account', async () => {
    const { context, page } = await newPage();
    const missing: string[] = [];
    page.on('response', (res) => {
      if (res.status() === 404) missing.push(res.url());
    });
    try {
      await page.goto(`${server!.api}/`);
      await heading(page, 'Sign in');
      await shots(page, '01-sign-in');
      // a failed sign-up's error is for the sign-up page only
      await page.getByRole('link', { name: 'Create an account' }).click();
      await heading(page, 'Create your account');
      await page.getByText('At least 10 characters.').waitFor();
      await page.getByLabel('E-mail').fill('someone@localhost');
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByRole('alert').filter({ hasText: 'invalid_request' }).waitFor();
      await shots(page, '02-sign-up-error');
      await page.getByRole('link', { name: 'Sign in' }).last().click();
      await heading(page, 'Sign in');
      assert.equal(await page.getByRole('alert').count(), 0, 'the sign-up error is not on the sign-in page');
      // a wrong password is answered in the API's words
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'invalid_credentials' }).waitFor();

      await page.getByRole('link', { name: 'Create an account' }).click();
      // the page is drawn anew for its route: what is typed before it is would be lost with the old one
      await heading(page, 'Create your account');
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Create account' }).click();
      await heading(page, 'Projects');
      await page.getByText('No project yet').waitFor();
      await shots(page, '03-projects-empty');
      await page.getByLabel('New project name').fill(PROJECT);
      await page.getByRole('button', { name: 'Create project' }).click();
      await heading(page, 'Overview');
      projectUrl = page.url().replace(/#.*/, '') + `#/projects/${/#\/projects\/(prj_[^/]+)/.exec(page.url())![1]}`;

      // no credential: the overview says what to do, and the credentials page does it
      await page.getByText('No credential yet').waitFor();
      await page.getByRole('link', { name: 'Create a credential' }).click();
      await heading(page, 'Credentials');
      await shots(page, '04-credentials-empty');
      await page.getByRole('button', { name: 'Create your first credential' }).click();
      await page.getByLabel('Name', { exact: true }).fill('backend');
      await page.getByRole('button', { name: 'Create credential' }).click();
      const notice = dialog(page, 'App Secret of backend');
      await notice.waitFor();
      assert.match(await notice.textContent() ?? '', /shown only this once/);
      appId = (await page.getByTestId('app-id').textContent())!;
      secret = (await page.getByTestId('app-secret').textContent())!;
      await page.getByRole('button', { name: 'Copy App Secret' }).click();
      assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), secret);
      await shots(page, '05-credential-secret');
      await page.getByRole('button', { name: 'I have stored it' }).click();
      assert.equal((await tokenWith(appId, secret)).status, 200);

      // rotate, confirmed in the page: the old secret stops working at once
      await page.getByRole('button', { name: 'Rotate backend' }).click();
      const rotate = dialog(page, 'Rotate the App Secret of backend?');
      await shots(page, '06-credential-rotate-dialog');
      await rotate.getByRole('button', { name: 'Cancel' }).click();
      await rotate.waitFor({ state: 'detached' });
      assert.equal((await tokenWith(appId, secret)).status, 200, 'cancelled: nothing rotated');
      await page.getByRole('button', { name: 'Rotate backend' }).click();
      await dialog(page, 'Rotate the App Secret of backend?').getByRole('button', { name: 'Rotate secret' }).click();
      await dialog(page, 'App Secret of backend').waitFor();
      const rotated = (await page.getByTestId('app-secret').textContent())!;
      assert.notEqual(rotated, secret);
      assert.equal((await tokenWith(appId, secret)).status, 401);
      secret = rotated;
      await page.getByRole('button', { name: 'I have stored it' }).click();
      await shots(page, '07-credentials');

      // overview: the App ID and snippets with it, never the secret; a test token opened in the inspector
      await nav(page, 'Overview');
      await heading(page, 'Overview');
      assert.equal(await page.getByTestId('overview-app-id').textContent(), appId);
      await page.getByRole('button', { name: 'Copy App ID' }).click();
      assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), appId);
      for (const snippet of ['Token request (curl)', 'Server SDK (Node.js)', 'App SDK (browser)']) await page.getByText(snippet).waitFor();
      const curl = await page.locator('pre', { hasText: 'curl -X POST' }).textContent();
      assert.ok(curl?.includes(`-u "${appId}:$RTC_APP_SECRET"`), curl ?? '');
      assert.ok((await page.locator('pre', { hasText: 'TokenClient' }).textContent())?.includes(`appId: '${appId}'`));
      assert.ok(!(await page.content()).includes(secret), 'the App Secret is nowhere in the page');
      await page.getByRole('button', { name: 'Create test token' }).click();
      await page.getByRole('status').filter({ hasText: 'Token issued for alice in my-room' }).waitFor();
      const response = await page.getByLabel('Token response').textContent() ?? '';
      assert.match(response, /"grant": "ey/);
      assert.match(response, /"key": "\(hidden/);
      await shots(page, '08-overview');
      await page.getByRole('button', { name: 'Open in grant inspector' }).click();
      await heading(page, 'Grant inspector');
      assert.match(page.url(), /\/inspect$/);
      await page.getByTestId('verdict').filter({ hasText: 'Valid signature' }).waitFor();
      await page.locator('dd', { hasText: 'my-room' }).waitFor();
      await shots(page, '09-inspector');

      // webhooks: create (secret once), test event and its delivery, edit, disable, rotate, delete
      await nav(page, 'Webhooks');
      await heading(page, 'Webhooks');
      await page.getByText('No endpoint yet').waitFor();
      await shots(page, '10-webhooks-empty');
      await page.getByRole('button', { name: 'Add your first endpoint' }).click();
      await page.getByLabel('Endpoint URL').fill(HOOK);
      await page.getByLabel('Description').fill('backend receiver');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await dialog(page, `Signing secret of ${HOOK}`).waitFor();
      const hookSecret = (await page.getByTestId('webhook-secret').textContent())!;
      assert.match(hookSecret, /^whsec_/);
      await page.getByRole('button', { name: 'I have stored it' }).click();
      await page.getByRole('button', { name: `Send test event to ${HOOK}` }).click();
      await page.getByRole('status').filter({ hasText: /Test event evt_\S+ sent/ }).waitFor();
      await page.getByRole('region', { name: `Delivery log of ${HOOK}` }).getByText('webhook.test').waitFor({ timeout: 15_000 });
      await page.getByRole('button', { name: `Edit ${HOOK}` }).click();
      const edit = page.getByRole('region', { name: 'Edit endpoint' });
      await edit.getByLabel('Description').fill('renamed receiver');
      await edit.getByRole('button', { name: 'Save endpoint' }).click();
      await page.getByRole('cell', { name: /renamed receiver/ }).waitFor();
      await page.getByRole('button', { name: `Disable ${HOOK}` }).click();
      await page.getByRole('button', { name: `Enable ${HOOK}` }).waitFor();
      await page.getByRole('button', { name: `Rotate secret of ${HOOK}` }).click();
      await dialog(page, `Rotate the signing secret of ${HOOK}?`).getByRole('button', { name: 'Rotate secret' }).click();
      await dialog(page, `Signing secret of ${HOOK}`).waitFor();
      assert.notEqual(await page.getByTestId('webhook-secret').textContent(), hookSecret);
      await page.getByRole('button', { name: 'I have stored it' }).click();
      await page.getByText(/old secret until/).waitFor();
      await shots(page, '11-webhooks');
      await page.getByRole('button', { name: `Delete ${HOOK}` }).click();
      await dialog(page, `Delete ${HOOK}?`).getByRole('button', { name: 'Delete endpoint' }).click();
      await page.getByText('No endpoint yet').waitFor();
      // a reload stays on the page
      await page.reload();
      await heading(page, 'Webhooks');

      await nav(page, 'Rooms');
      await heading(page, 'Rooms');
      await page.getByText('No live room').waitFor();
      await shots(page, '12-rooms-empty');
      await nav(page, 'Sessions and usage');
      await heading(page, 'Sessions and usage');
      await page.getByTestId('live-summary').filter({ hasText: 'Live now: 0 rooms, 0 participants' }).waitFor();
      await page.getByTestId('period-cost').filter({ hasText: 'on the developer plan' }).waitFor();
      await shots(page, '13-usage');
      await nav(page, 'Test room');
      await heading(page, 'Test room');
      // the devices are listed once the browser lets the page use them
      await page.getByRole('combobox', { name: /^Camera/ }).locator('option').first().waitFor({ state: 'attached' });
      await page.getByRole('combobox', { name: /^Microphone/ }).locator('option').first().waitFor({ state: 'attached' });
      // the fake microphone's beep moves the meter
      await page.locator('meter:not([data-level="0.00"])').waitFor({ timeout: 15_000 });
      await shots(page, '14-test-room');

      // the account: who is signed in, a new password
      await nav(page, 'Account');
      await heading(page, 'Account');
      assert.equal(await page.getByTestId('account-email').textContent(), email);
      await page.getByLabel('Current password').fill('not my password');
      await page.getByLabel('New password').fill('a newer console password');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByRole('alert').filter({ hasText: 'invalid_credentials' }).waitFor();
      await page.getByLabel('Current password').fill(password);
      await page.getByLabel('New password').fill('a newer console password');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByRole('status').filter({ hasText: 'Password changed' }).waitFor();
      password = 'a newer console password';
      await page.getByRole('button', { name: 'Sign out everywhere' }).click();
      await shots(page, '15-account-sign-out-dialog');
      await dialog(page, 'Sign out everywhere?').getByRole('button', { name: 'Cancel' }).click();
      await shots(page, '16-account');
      await page.getByRole('link', { name: 'Pricing' }).click();
      await heading(page, 'Pricing');
      await shots(page, '17-pricing');

      // at a phone's width the navigation is a menu
      await page.setViewportSize(PHONE);
      await page.goto(projectUrl);
      await heading(page, 'Overview');
      assert.equal(await page.getByRole('link', { name: 'Rooms', exact: true }).isVisible(), false, 'the side navigation is folded away');
      await page.getByRole('button', { name: 'Menu' }).click();
      await nav(page, 'Rooms');
      await heading(page, 'Rooms');
      await page.getByRole('button', { name: 'Menu', expanded: false }).waitFor();
      await page.setViewportSize(DESKTOP);
      // the project switcher keeps the page
      await page.getByRole('combobox', { name: /^Project/ }).selectOption({ label: 'All projects' });
      await heading(page, 'Projects');
      await page.getByRole('combobox', { name: /^Project/ }).selectOption({ label: PROJECT });
      await heading(page, 'Overview');
      assert.deepEqual(missing, [], 'nothing the page asked for was missing (favicon included)');
    } finally {
      await context.close();
    }
  });

  it('joins the test room, lets a second device in with a one-use share link, and removes, re-permits and ends from the Rooms page', async () => {
    const host = await newPage();
    const guest = await newPage();
    const late = await newPage();
    try {
      await signIn(host.page, `/${new URL(projectUrl).hash}/test-room`);
      await heading(host.page, 'Test room');
      // joining before the page has the camera and microphone is refused: the meter moves once it has them
      await host.page.locator('meter:not([data-level="0.00"])').waitFor({ timeout: 15_000 });
      await host.page.getByLabel('Your user id').fill('alice');
      await host.page.getByRole('button', { name: 'Join test room' }).click();
      await host.page.getByRole('status').filter({ hasText: 'In test-room as alice.' }).waitFor();
      await host.page.getByText('Nobody else is here yet').waitFor();
      await host.page.getByRole('button', { name: 'Create share link' }).click();
      const link = await host.page.getByRole('textbox', { name: /^Share link/ }).inputValue();
      assert.match(link, /\/#\/join\/inv_[A-Za-z0-9_.-]+$/);
      assert.ok(!link.includes(secret), 'no App Secret in the link');

      // the second device: no account, no session
      await guest.page.goto(link);
      await heading(guest.page, 'Join a test room');
      const bob = await joinAsGuest(guest.page, 'test-room');
      // frames really decoded in each page's <video> of the other (polled: the page's CSP forbids eval)
      const decodes = async (page: Page, user: string): Promise<void> => {
        const frames = `document.querySelector('video[data-user="${user}"]')?.getVideoPlaybackQuality().totalVideoFrames ?? 0`;
        const deadline = Date.now() + 30_000;
        while ((await page.evaluate<number>(frames)) <= 10) {
          if (Date.now() > deadline) assert.fail(`no frames of ${user}`);
          await page.waitForTimeout(100);
        }
      };
      await decodes(host.page, bob);
      await decodes(guest.page, 'alice');
      await shots(host.page, '18-test-room-call');
      await shots(guest.page, '19-join-page');

      // the link worked once
      await late.page.goto(link);
      await late.page.getByRole('button', { name: 'Join', exact: true }).click();
      await late.page.getByRole('alert').filter({ hasText: 'already used' }).waitFor();

      // the Rooms page: both, yourself marked; the call goes on meanwhile
      await nav(host.page, 'Rooms');
      await heading(host.page, 'Rooms');
      const room = host.page.getByRole('region', { name: 'Room test-room' });
      await room.getByRole('row', { name: new RegExp(bob) }).waitFor({ timeout: 15_000 });
      assert.match(await room.getByRole('row', { name: /alice/ }).textContent() ?? '', /you/);
      assert.doesNotMatch(await room.getByRole('row', { name: new RegExp(bob) }).textContent() ?? '', /you/);
      // alice's published streams, her quality once a heartbeat measured it, and a mute of her camera and back
      const alice = room.getByRole('row', { name: /alice/ });
      await alice.getByRole('listitem').filter({ hasText: /video · camera/ }).waitFor();
      await alice.getByRole('listitem').filter({ hasText: /audio · microphone/ }).waitFor();
      await alice.locator('.quality dd').first().filter({ hasText: /^[1-9][0-9.]* (k|M)bit\/s$/ }).waitFor({ timeout: 30_000 });
      await shots(host.page, '20-rooms');
      const roomApi = async (): Promise<RtcRoom> => {
        const res = await request(`${server!.urls['api']}/v1/rtc/rooms/test-room`, {
          method: 'GET', headers: { authorization: `Basic ${Buffer.from(`${appId}:${secret}`).toString('base64')}` },
        });
        assert.equal(res.status, 200, res.text);
        return res.json<RtcRoom>();
      };
      const camera = alice.getByRole('listitem').filter({ hasText: /video · camera/ });
      const cameraMuted = async (): Promise<boolean | undefined> =>
        (await roomApi()).participants.find((x) => x.user_id === 'alice')?.streams.find((x) => x.kind === 'video')?.muted;
      await camera.getByRole('button', { name: /^Mute stream \d+ of alice$/ }).click();
      const muting = host.page.getByRole('alertdialog', { name: /^Mute stream \d+ \(video, camera\) of alice\?$/ });
      await shots(host.page, '20b-rooms-mute-dialog');
      await muting.getByRole('button', { name: 'Mute stream' }).click();
      await host.page.getByRole('status').filter({ hasText: /stream \d+ \(video, camera\) of alice was muted/ }).waitFor();
      await camera.getByText('muted', { exact: true }).waitFor();
      assert.equal(await cameraMuted(), true);
      await camera.getByRole('button', { name: /^Unmute stream \d+ of alice$/ }).click();
      await host.page.getByRole('alertdialog', { name: /^Unmute stream/ }).getByRole('button', { name: 'Unmute stream' }).click();
      await host.page.getByRole('status').filter({ hasText: /of alice was unmuted/ }).waitFor();
      await camera.getByRole('button', { name: /^Mute stream \d+ of alice$/ }).waitFor();
      assert.equal(await camera.getByText('muted', { exact: true }).count(), 0);
      assert.equal(await cameraMuted(), false);

      await room.getByRole('button', { name: `Permissions of ${bob}` }).click();
      const permit = dialog(host.page, `Permissions of ${bob}`);
      await permit.getByLabel('May publish streams').fill('');
      await permit.getByRole('button', { name: 'Save permissions' }).click();
      await host.page.getByRole('status').filter({ hasText: `The permissions of ${bob} were changed.` }).waitFor();
      await room.getByRole('row', { name: new RegExp(bob) }).getByRole('cell', { name: 'nothing', exact: true }).waitFor();

      await room.getByRole('button', { name: `Remove ${bob}` }).click();
      const removal = dialog(host.page, `Remove ${bob} from test-room?`);
      await removal.getByLabel('Ban').selectOption({ label: '10 minutes' });
      await shots(host.page, '21-rooms-remove-dialog');
      await removal.getByRole('button', { name: `Remove ${bob}` }).click();
      await guest.page.getByRole('status').filter({ hasText: 'You were removed from the room.' }).waitFor();
      await host.page.getByRole('status').filter({ hasText: new RegExp(`${bob} was removed, banned until`) }).waitFor();
      // from the API's answer to the removed page's revocation (both pages share this machine's clock)
      const answeredAt = Number(await host.page.evaluate<string | undefined>('document.body.dataset.removeAnsweredAt'));
      const removedAt = Number(await guest.page.evaluate<string | undefined>('document.body.dataset.removedAt'));
      assert.ok(removedAt - answeredAt < 1000, `removed ${removedAt - answeredAt} ms after the answer`);

      await room.getByRole('button', { name: 'End room' }).click();
      await dialog(host.page, 'End test-room?').getByRole('button', { name: 'End room' }).click();
      await host.page.getByRole('status').filter({ hasText: /test-room was ended \(1 participant disconnected\)/ }).waitFor();
      await host.page.getByText('No live room').waitFor({ timeout: 15_000 });
      await nav(host.page, 'Test room');
      await host.page.getByRole('status').filter({ hasText: 'You were removed from the room.' }).waitFor();
    } finally {
      for (const p of [host, guest, late]) await p.context.close();
    }
  });

  it('shows live figures that follow a call on the same page, the session history with its kinds, and the period\'s cost', async () => {
    const host = await newPage();
    const guest = await newPage();
    const nodeSessions: { close(): Promise<void> }[] = [];
    try {
      // sessions of Node clients over WebSocket frames: one sends video (of a size the node cannot see), the others nothing
      const token = async (user: string): Promise<TokenResponse> => {
        const res = await request(`${server!.urls['token']}/v1/rtc/tokens`, {
          headers: { authorization: `Basic ${Buffer.from(`${appId}:${secret}`).toString('base64')}` },
          body: { room_id: 'usage-extra', user_id: user, role: 'speaker', publish_streams: [7] },
        });
        assert.equal(res.status, 200, res.text);
        return res.json<TokenResponse>();
      };
      const camera = await joinMedia(await token('node-video'), { reconnect: false });
      const stream = await camera.publish(7, 'video');
      for (let i = 0; i < 5; i++) await stream.send(text(`v${i}`));
      await camera.close();
      for (let i = 0; i < 10; i++) nodeSessions.push(await joinMedia(await token(`node-${i}`), { reconnect: false }));
      for (const s of nodeSessions.splice(0)) await s.close();

      await signIn(host.page, `/${new URL(projectUrl).hash}/test-room`);
      await heading(host.page, 'Test room');
      await host.page.locator('meter:not([data-level="0.00"])').waitFor({ timeout: 15_000 });
      await host.page.getByLabel('Room', { exact: true }).fill('usage-room');
      await host.page.getByLabel('Your user id').fill('carol');
      await host.page.getByRole('button', { name: 'Join test room' }).click();
      await host.page.getByRole('status').filter({ hasText: 'In usage-room as carol.' }).waitFor();
      await host.page.getByRole('button', { name: 'Create share link' }).click();
      const link = await host.page.getByRole('textbox', { name: /^Share link/ }).inputValue();

      // the call goes on while the page shows its figures: one participant, then two within a few seconds of the second join
      await nav(host.page, 'Sessions and usage');
      await heading(host.page, 'Sessions and usage');
      const summary = host.page.getByTestId('live-summary');
      await summary.filter({ hasText: 'Live now: 1 room, 1 participant' }).waitFor({ timeout: 5000 });
      await guest.page.goto(link);
      const dave = await joinAsGuest(guest.page, 'usage-room');
      const joinedAt = Date.now();
      await summary.filter({ hasText: 'Live now: 1 room, 2 participants' }).waitFor({ timeout: 4000 });
      console.log(`# "2 participants" ${Date.now() - joinedAt} ms after the second join`);

      // the history: both open, newest first, the Node clients' ended sessions with their kinds
      const history = host.page.getByRole('table', { name: 'Session history' });
      await history.getByRole('row', { name: new RegExp(`${dave}.*usage-room.*in the room`) }).waitFor({ timeout: 5000 });
      await history.getByRole('row', { name: /carol.*usage-room.*in the room/ }).waitFor();
      assert.equal(await history.getByRole('row').count(), 11, 'a header and a page of ten');
      await host.page.getByRole('button', { name: 'Load more' }).click();
      await history.getByRole('row', { name: /node-video.*usage-extra.*left.*Video SD/ }).waitFor();
      await history.getByRole('row', { name: /node-0.*usage-extra.*left.*Audio/ }).waitFor();
      await shots(host.page, '23-sessions-call');

      // the guest leaves: the figures follow
      await guest.page.getByRole('button', { name: 'Leave' }).click();
      await summary.filter({ hasText: 'Live now: 1 room, 1 participant' }).waitFor({ timeout: 4000 });
      // WebRTC: the fake camera's 640x480 key frames make it Video SD
      await history.getByRole('row', { name: new RegExp(`${dave}.*usage-room.*left.*Video SD`) }).waitFor({ timeout: 5000 });

      // one room's sessions
      await host.page.getByRole('search', { name: 'Filter the sessions' }).getByLabel('Room').fill('usage-room');
      await host.page.getByRole('button', { name: 'Filter' }).click();
      await history.getByRole('row', { name: /carol/ }).waitFor();
      // the header row and the room's two sessions (a string predicate would be refused by the page's CSP)
      for (let i = 0; (await history.getByRole('row').count()) !== 3; i++) {
        assert.ok(i < 200, `the filtered history shows ${await history.getByRole('row').count() - 1} sessions, not 2`);
        await new Promise<void>((resolve) => setTimeout(resolve, 25));
      }
      assert.equal(await host.page.getByRole('button', { name: 'Load more' }).count(), 0);

      // the period's cost, on the developer plan, with the way to the prices
      await host.page.getByTestId('period-cost').filter({ hasText: /0\.00 USD on the developer plan/ }).waitFor();
      await host.page.getByRole('link', { name: 'pricing page' }).click();
      await heading(host.page, 'Pricing');
    } finally {
      for (const s of nodeSessions) await s.close();
      for (const p of [host, guest]) await p.context.close();
    }
  });
});
