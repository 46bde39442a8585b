import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

/** The id GitHub's renderer gives a heading (github-slugger): lower case, punctuation but `_` and `-` dropped, spaces to `-`. */
function githubSlug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

describe('docs/reference/api.md', () => {
  const text = readFileSync(new URL('../../docs/reference/api.md', import.meta.url), 'utf8');
  const targets = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of text.split('\n')) {
    const heading = /^#{1,6} (.+)$/.exec(line);
    if (heading) {
      const slug = githubSlug(heading[1]!);
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      targets.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const [, id] of line.matchAll(/<a id="([^"]+)"><\/a>/g)) targets.add(id!);
  }

  it('has an anchor for every in-page link', () => {
    const links = [...text.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
    assert.ok(links.length > 100, 'the page links its operations and schemas');
    const broken = [...new Set(links.filter((id) => !targets.has(id)))];
    assert.deepEqual(broken, []);
  });
});
