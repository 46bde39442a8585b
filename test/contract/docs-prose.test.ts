/** Mechanical checks of the repository's prose: what a reader trips over and a review misses. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoFiles } from '../helpers/repo-files.ts';
import { ROOT } from '../helpers/root.ts';

/**
 * Lines that start a sentence in lower case right after a line that ended one: the mark of a
 * fragment left behind by an edit (a sentence's tail repeated after the paragraph it belonged to).
 */
function strayFragments(text: string): string[] {
  const found: string[] = [];
  let fenced = false;
  let previous = '';
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const prose = !fenced && !line.startsWith('|') && !/^\s*(```|~~~)/.test(line);
    if (prose && /[.!?]\)?$/.test(previous.trimEnd()) && !/\b(e\.g|i\.e|etc|vs)\.$/.test(previous.trimEnd()) && /^[a-z]/.test(line)) {
      found.push(line);
    }
    previous = prose ? line : '';
  }
  return found;
}

describe('markdown prose', () => {
  it('finds a fragment left after a sentence', () => {
    assert.deepEqual(strayFragments('A start that fails exits 1.\nstart that fails (a port taken) exits 1.\n'),
      ['start that fails (a port taken) exits 1.']);
    assert.deepEqual(strayFragments('Wrapped lines\ncontinue a sentence. Fine.\n\n```\nend.\ncode\n```\n'), []);
  });

  it('has no sentence fragment left behind in any markdown file', () => {
    const files = repoFiles('.md');
    const stray = files.flatMap((file) => strayFragments(readFileSync(join(ROOT, file), 'utf8')).map((line) => `${file}: ${line}`));
    assert.deepEqual(stray, []);
  });
});
