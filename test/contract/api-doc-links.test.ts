import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { repoFiles } from '../helpers/repo-files.ts';
import { ROOT } from '../helpers/root.ts';

/** The id GitHub's renderer gives a heading (github-slugger): lower case, punctuation but `_` and `-` dropped, spaces to `-`. */
function githubSlug(heading: string): string {
  // a link in a heading counts by its text
  const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Markdown outside fenced code blocks, where links and headings are what they say. */
function prose(text: string): string[] {
  const lines: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced) lines.push(line);
  }
  return lines;
}

/** Every anchor a markdown file offers: its headings' ids (numbered when repeated) and explicit `<a id>`s. */
function anchorsOf(text: string): Set<string> {
  const targets = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(text)) {
    const heading = /^#{1,6} (.+)$/.exec(line);
    if (heading) {
      const slug = githubSlug(heading[1]!);
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      targets.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const [, id] of line.matchAll(/<a (?:id|name)="([^"]+)"><\/a>/g)) targets.add(id!);
  }
  return targets;
}

/** Links of a markdown file to a place in the repository: `[text](target)`, the target without scheme. */
function localLinks(text: string): string[] {
  const links: string[] = [];
  for (const line of prose(text)) {
    // inline code is not a link
    const bare = line.replace(/`[^`]*`/g, '');
    for (const [, target] of bare.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target!)) links.push(target!);
    }
  }
  return links;
}

describe('docs/reference/api.md', () => {
  const text = readFileSync(join(ROOT, 'docs/reference/api.md'), 'utf8');
  const targets = anchorsOf(text);

  it('has an anchor for every in-page link', () => {
    const links = [...text.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
    assert.ok(links.length > 100, 'the page links its operations and schemas');
    const broken = [...new Set(links.filter((id) => !targets.has(id)))];
    assert.deepEqual(broken, []);
  });
});

describe('links between the repository\'s markdown files', () => {
  const files = repoFiles('.md');
  const anchors = new Map<string, Set<string>>();
  const anchorsIn = (file: string): Set<string> => {
    let found = anchors.get(file);
    if (!found) {
      found = anchorsOf(readFileSync(join(ROOT, file), 'utf8'));
      anchors.set(file, found);
    }
    return found;
  };

  it('lead to files that exist and, for a markdown file, to anchors it has (in-page links too)', () => {
    assert.ok(files.length > 15, 'the repository has its docs');
    const broken: string[] = [];
    for (const file of files) {
      for (const link of localLinks(readFileSync(join(ROOT, file), 'utf8'))) {
        const [path = '', anchor] = link.split('#', 2);
        const target = path === '' ? file : relative(ROOT, join(ROOT, dirname(file), decodeURI(path)));
        if (!existsSync(join(ROOT, target))) {
          broken.push(`${file}: ${link} (no such file)`);
          continue;
        }
        if (anchor === undefined || !target.endsWith('.md') || statSync(join(ROOT, target)).isDirectory()) continue;
        if (!anchorsIn(target).has(decodeURIComponent(anchor))) broken.push(`${file}: ${link} (no such anchor)`);
      }
    }
    assert.deepEqual(broken, []);
  });
});
