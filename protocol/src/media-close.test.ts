import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { MEDIA_CLOSE } from './media-close.ts';

const doc = readFileSync(new URL('../../docs/protocol/media.md', import.meta.url), 'utf8');

/** Rows of the "Close codes" table: code, name, reconnect. */
function documentedCodes(): Map<number, { name: string; reconnect: boolean }> {
  const section = doc.slice(doc.indexOf('## 8. Close codes'), doc.indexOf('## 9.'));
  const rows = new Map<number, { name: string; reconnect: boolean }>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (!/^\d{4}$/.test(cells[1] ?? '')) continue;
    rows.set(Number(cells[1]), { name: cells[2]!, reconnect: cells[4] === 'yes' });
  }
  return rows;
}

describe('media close codes', () => {
  it('the table and docs/protocol/media.md are identical', () => {
    const documented = documentedCodes();
    const table = new Map(Object.values(MEDIA_CLOSE).map((c) => [c.code, { name: c.reason, reconnect: c.reconnect }]));
    assert.deepEqual(documented, table);
  });
});
