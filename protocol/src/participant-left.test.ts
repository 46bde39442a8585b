import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { MEDIA_CLOSE } from './media-close.ts';
import { PARTICIPANT_LEFT_REASONS } from './webhooks.ts';

const doc = readFileSync(new URL('../../docs/reference/webhooks.md', import.meta.url), 'utf8');

/** Rows of the "Why a participant left" table: reason, and the close code(s) its third column names. */
function documentedReasons(): Map<string, string> {
  const start = doc.indexOf('### Why a participant left');
  const section = doc.slice(start, doc.indexOf('\n## ', start));
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const reason = /^`([a-z_]+)`$/.exec(cells[1] ?? '')?.[1];
    // the header row names the column `reason`
    if (reason && reason !== 'reason') rows.set(reason, cells[3] ?? '');
  }
  return rows;
}

describe('participant.left reasons', () => {
  it('are the closed list docs/reference/webhooks.md documents, in its order', () => {
    assert.deepEqual([...documentedReasons().keys()], [...PARTICIPANT_LEFT_REASONS]);
  });

  it('name, for each, close codes and names of the media protocol', () => {
    const names = new Map<number, string>(Object.values(MEDIA_CLOSE).map((c) => [c.code, c.reason]));
    for (const [reason, closes] of documentedReasons()) {
      for (const [, code, name] of closes.matchAll(/(\d{4}) `([a-z_]+)`/g)) {
        assert.equal(names.get(Number(code)), name, `${reason}: ${code} ${name}`);
      }
    }
  });
});
