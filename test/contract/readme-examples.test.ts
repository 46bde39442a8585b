/** What the READMEs' examples tell a first user, held against what the platform does. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { loadConfig } from '../../server/src/config.ts';
import { codeBlocks } from '../helpers/markdown.ts';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');


describe('connecting a local page, as the READMEs show it', () => {
  // npm start runs the media role without TLS: the SDK's default (wss://) cannot reach it
  const config = loadConfig({ RTC_DATA_DIR: '/nonexistent' });

  it('the app SDK\'s first example connects with secure: false and says why', () => {
    assert.equal(config.tls, undefined, 'npm start serves no TLS by default');
    const first = codeBlocks(read('sdk/app/README.md')).find((block) => block.includes('connect('));
    assert.ok(first, 'the README has a connect example');
    assert.match(first, /connect\(\{[^}]*\bsecure: false\b/, 'the first connect passes secure: false');
    assert.match(first, new RegExp(`ws://127\\.0\\.0\\.1:${config.ports.media}\\b`), 'and names the ws:// address npm start serves');
    assert.match(first, /wss:\/\/ \(the default\)/);
  });

  it('the repository README says how a page reaches npm start\'s platform', () => {
    assert.match(read('README.md'), /`secure: false`, since the media role serves `ws:\/\/`/);
  });
});
