import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';

import { startInProcess, type InProcessPlatform } from '../../../test/helpers/inproc.ts';

interface Extension {
  id: string; name: string; category: string; publisher: string; summary: string; tags: string[];
  pricing: { model: 'free' } | { model: 'per_1000_minutes'; currency: string; unit_price_minor: number };
}
interface Page { marketplace_version: string; extensions: Extension[]; next_cursor: string | null }
interface Categories { categories: { id: string; name: string; extension_count: number }[] }

describe('public API: marketplace categories and extensions', () => {
  let server: InProcessPlatform;
  let categories: Categories['categories'];
  let everything: Extension[];

  const get = (query: Record<string, string>) =>
    server.request(`${server.api}/v1/public/marketplace/extensions?${new URLSearchParams(query).toString()}`);

  /** Follows next_cursor to the end; fails on any page that is not 200. */
  async function walk(query: Record<string, string>): Promise<{ items: Extension[]; pages: number }> {
    const items: Extension[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(cursor === null ? query : { ...query, cursor });
      assert.equal(res.status, 200, res.text);
      const page = res.json<Page>();
      items.push(...page.extensions);
      cursor = page.next_cursor;
      pages += 1;
      assert.ok(pages < 200, 'pagination ends');
    } while (cursor !== null);
    return { items, pages };
  }

  before(async () => {
    server = await startInProcess();
    categories = (await server.request(`${server.api}/v1/public/marketplace/categories`)).json<Categories>().categories;
    everything = (await walk({ limit: '100' })).items;
  });
  after(async () => {
    await server.close();
  });

  it('counts every extension in exactly one listed category', () => {
    assert.ok(everything.length > 20);
    const ids = new Set(categories.map((c) => c.id));
    for (const ext of everything) assert.ok(ids.has(ext.category), `${ext.id}: ${ext.category}`);
    assert.equal(categories.reduce((sum, c) => sum + c.extension_count, 0), everything.length);
    for (const c of categories) assert.equal(c.extension_count, everything.filter((e) => e.category === c.id).length, c.id);
    for (const wanted of ['noise-suppression', 'cloud-recording', 'live-transcription', 'video-moderation']) {
      assert.ok(everything.some((e) => e.id === wanted), wanted);
    }
  });

  it('orders extensions by id and pages by 20 by default', async () => {
    const ids = everything.map((e) => e.id);
    assert.deepEqual(ids, [...ids].sort());
    const first = (await get({})).json<Page>();
    assert.equal(first.extensions.length, 20);
    assert.notEqual(first.next_cursor, null);
  });

  for (const limit of [1, 2, 3, 7, 10, 28, 29, 30, 100]) {
    it(`loses and repeats nothing across pages of ${limit}`, async () => {
      const { items, pages } = await walk({ limit: String(limit) });
      assert.deepEqual(items.map((e) => e.id), everything.map((e) => e.id));
      assert.equal(pages, Math.max(1, Math.ceil(everything.length / limit)));
    });
  }

  it('filters by category, across pages', async () => {
    for (const category of categories) {
      const { items } = await walk({ category: category.id, limit: '2' });
      assert.deepEqual(items.map((e) => e.id), everything.filter((e) => e.category === category.id).map((e) => e.id), category.id);
    }
  });

  it('searches id, name, summary, publisher and tags, case-insensitive, every word required', async () => {
    const ids = async (q: string, extra: Record<string, string> = {}) => (await walk({ q, ...extra })).items.map((e) => e.id);
    assert.deepEqual(await ids('noise'), ['low-light-enhancement', 'noise-suppression'], 'an id, a name or a summary');
    assert.deepEqual(await ids('NoIsE sUpPrEsSiOn'), ['noise-suppression']);
    assert.deepEqual(await ids('  denoise   '), ['noise-suppression']);
    assert.deepEqual(await ids('rtmp'), ['live-streaming-rtmp'], 'a tag');
    assert.deepEqual(await ids('guardian'), ['audio-moderation', 'profanity-filter'], 'a publisher');
    const both = await ids('captions ai');
    assert.ok(both.length > 0);
    for (const id of both) {
      const ext = everything.find((e) => e.id === id)!;
      const text = [ext.id, ext.name, ext.summary, ext.publisher, ...ext.tags].join(' ').toLowerCase();
      assert.ok(text.includes('captions') && text.includes('ai'), id);
    }
    assert.deepEqual(await ids('safety', { category: 'moderation' }),
      everything.filter((e) => e.category === 'moderation' && e.tags.includes('safety')).map((e) => e.id));
    const none = (await get({ q: 'no-such-extension-anywhere' })).json<Page>();
    assert.deepEqual(none.extensions, []);
    assert.equal(none.next_cursor, null);
  });

  it('pages any filter to the same items as one large page (property)', async () => {
    const words = ['audio', 'video', 'recording', 'ai', 'rtc platform', 'safety', 'camera', 'x'];
    await fc.assert(fc.asyncProperty(
      fc.option(fc.constantFrom(...categories.map((c) => c.id)), { nil: undefined }),
      fc.option(fc.constantFrom(...words), { nil: undefined }),
      fc.integer({ min: 1, max: 6 }),
      async (category, q, limit) => {
        const filters: Record<string, string> = {};
        if (category !== undefined) filters['category'] = category;
        if (q !== undefined) filters['q'] = q;
        const whole = (await get({ ...filters, limit: '100' })).json<Page>().extensions.map((e) => e.id);
        const paged = (await walk({ ...filters, limit: String(limit) })).items.map((e) => e.id);
        assert.deepEqual(paged, whole);
      },
    ), { numRuns: 15 });
  });

  it('refuses a cursor with other filters, an altered cursor and a made-up one', async () => {
    const page = (await get({ category: 'moderation', limit: '1' })).json<Page>();
    assert.ok(page.next_cursor);
    const cursor = page.next_cursor;
    const message = 'cursor is not valid for this listing: pass next_cursor of the previous page with the same filters';
    const misuses: Record<string, string>[] = [
      { category: 'analytics', limit: '1', cursor },
      { limit: '1', cursor },
      { category: 'moderation', q: 'safety', cursor },
      { category: 'moderation', cursor: `${cursor.slice(0, -2)}AA` },
      { cursor: 'bm90IGEgY3Vyc29y' },
    ];
    for (const query of misuses) {
      const res = await get(query);
      assert.equal(res.status, 400, JSON.stringify(query));
      assert.deepEqual(res.json(), { error: 'invalid_request', message });
    }
    // the same filters with another page size may go on
    assert.equal((await get({ category: 'moderation', limit: '3', cursor })).status, 200);
  });

  const BAD: readonly [string, string, RegExp][] = [
    ['limit=0', 'limit of 0', /^limit must be an integer from 1 to 100$/],
    ['limit=101', 'limit above 100', /^limit must be an integer from 1 to 100$/],
    ['limit=-1', 'negative limit', /^limit must be an integer from 1 to 100$/],
    ['limit=1.5', 'fractional limit', /^limit must be an integer from 1 to 100$/],
    ['limit=ten', 'limit in words', /^limit must be an integer from 1 to 100$/],
    ['limit=', 'empty limit', /^limit must be an integer from 1 to 100$/],
    ['limit=1e1', 'exponent limit', /^limit must be an integer from 1 to 100$/],
    ['limit=1&limit=2', 'repeated limit', /^limit must be given once$/],
    ['category=games', 'unknown category', /^category must be one of audio-processing, .*integrations$/],
    ['category=Moderation', 'category in the wrong case', /^category must be one of /],
    ['category=moderation&category=analytics', 'repeated category', /^category must be given once$/],
    ['q=', 'empty search', /^q must be a search text of 1 to 100 characters$/],
    ['q=%20%20', 'blank search', /^q must be a search text of 1 to 100 characters$/],
    [`q=${'a'.repeat(101)}`, 'search over 100 characters', /^q must be a search text of 1 to 100 characters$/],
    ['q=a&q=b', 'repeated search', /^q must be given once$/],
    ['cursor=', 'empty cursor', /^cursor must not be empty$/],
    ['sort=name', 'unknown parameter', /^unknown query parameter "sort" is not allowed$/],
    ['__proto__=x', 'prototype key', /^unknown query parameter "__proto__" is not allowed$/],
  ];
  for (const [query, rule, message] of BAD) {
    it(`refuses a bad query: ${rule}`, async () => {
      const res = await server.request(`${server.api}/v1/public/marketplace/extensions?${query}`);
      assert.equal(res.status, 400, res.text);
      const body = res.json<{ error: string; message: string }>();
      assert.equal(body.error, 'invalid_request');
      assert.match(body.message, message);
    });
  }

  it('gives each page its own ETag and answers 304 per page', async () => {
    const one = await get({ limit: '5' });
    const two = await get({ limit: '6' });
    assert.notEqual(one.headers['etag'], two.headers['etag']);
    const cached = await get({ limit: '5' });
    assert.equal(cached.headers['etag'], one.headers['etag']);
    const revalidated = await server.request(`${server.api}/v1/public/marketplace/extensions?limit=5`, {
      headers: { 'if-none-match': String(one.headers['etag']) },
    });
    assert.equal(revalidated.status, 304);
  });
});
