import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { ROOT } from '../helpers/platform.ts';

/** The example's process and every line it printed; `line` resolves with the first line matching. */
interface Example {
  readonly child: ChildProcess;
  readonly lines: string[];
  line(pattern: RegExp): Promise<RegExpMatchArray>;
}

function startExample(): Example {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/video-call/main.ts'], {
    cwd: ROOT, env: { ...process.env, CALL_PORT: '0' }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (text) => {
    lines.push(text);
    for (const w of [...waiters]) {
      const m = w.pattern.exec(text);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  return {
    child,
    lines,
    line: (pattern) => {
      const seen = lines.map((l) => pattern.exec(l)).find((m) => m !== null);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ pattern, resolve });
        child.once('exit', (code) => reject(new Error(`the example exited (${code}) before printing ${pattern}: ${lines.join('\n')}`)));
      });
    },
  };
}

describe('examples/video-call (npm run example:call)', () => {
  let example: Example | undefined;
  let browser: Browser | undefined;
  let url: string;

  before(async () => {
    example = startExample();
    url = (await example.line(/^call: open (http:\/\/127\.0\.0\.1:\d+\/)/))[1]!;
    browser = await launchChromium({ fakeMedia: true });
  });

  after(async () => {
    await browser?.close();
    if (example && example.child.exitCode === null) {
      const exited = new Promise((resolve) => example!.child.once('exit', resolve));
      example.child.kill('SIGINT');
      await exited;
    }
  });

  const joinAs = async (name: string): Promise<Page> => {
    const page = await (await browser!.newContext()).newPage();
    await page.goto(url);
    await page.getByLabel('Your name').fill(name);
    await page.getByRole('button', { name: 'Join' }).click();
    await page.getByRole('status').filter({ hasText: `In the call as ${name}.` }).waitFor();
    return page;
  };
  /** Page code: frames the `<video>` of `user` has decoded and shown (the test's TypeScript has no DOM types). */
  const frames = (user: string): string =>
    `(document.querySelector('.tile[data-user="${user}"] video')?.getVideoPlaybackQuality().totalVideoFrames ?? 0)`;

  it('refuses a name outside the page\'s pattern before joining', async () => {
    const page = await (await browser!.newContext()).newPage();
    await page.goto(url);
    const field = page.getByLabel('Your name');
    await field.fill('not a name!');
    const validity = () => field.evaluate((el) => {
      const { patternMismatch, valid } = (el as unknown as { validity: { patternMismatch: boolean; valid: boolean } }).validity;
      return { patternMismatch, valid };
    });
    assert.deepEqual(await validity(), { patternMismatch: true, valid: false }, 'the pattern compiles and applies');
    await field.fill('alice_2-b');
    assert.deepEqual(await validity(), { patternMismatch: false, valid: true });
    await page.context().close();
  });

  it('shows each tab the other\'s video, and removes one from the other\'s tab within a second', async () => {
    const alice = await joinAs('alice');
    const bob = await joinAs('bob');
    await alice.waitForFunction(`${frames('bob')} > 10`);
    await bob.waitForFunction(`${frames('alice')} > 10`);
    const shown = await alice.evaluate<number>(frames('bob'));
    await alice.waitForFunction(`${frames('bob')} > ${shown + 10}`);

    await alice.getByRole('button', { name: 'Remove bob from the call' }).click();
    await bob.getByRole('status').filter({ hasText: 'You were removed from the call.' }).waitFor();
    // from the example server's answer (the token revoked) to bob's session closing; both pages share this machine's clock
    await alice.locator('body[data-remove-answered-at]').waitFor({ state: 'attached' });
    const answeredAt = Number(await alice.evaluate<string | undefined>('document.body.dataset.removeAnsweredAt'));
    const removedAt = Number(await bob.evaluate<string | undefined>('document.body.dataset.removedAt'));
    assert.ok(removedAt - answeredAt < 1000, `removed ${removedAt - answeredAt} ms after the revocation was answered`);
    await alice.locator('.tile[data-user="bob"]').waitFor({ state: 'detached' });
    await example!.line(/^call server: removed bob \(token revoked\)$/);
  });
});
