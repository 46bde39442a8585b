/**
 * The media role loads werift with its first WebRTC session, not at start (docs/decisions/webrtc.md,
 * "The WebRTC stack is loaded with the first session"): no chain of static value imports leads
 * from the role's entry to werift. `import type` is erased and `import()` runs when called.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROLE = resolve(dirname(fileURLToPath(import.meta.url)), 'role.ts');

/** The static value imports of a file: relative ones as paths, packages by name. */
function valueImports(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const match of source.matchAll(/^(import|export)\b(?!\s+type\b)([^;]*?)\bfrom\s+'([^']+)'/gms)) {
    const clause = match[2]!;
    // `import { type A, type B } from` brings in no value either
    if (/^\s*\{[^}]*\}\s*$/.test(clause) && clause.replace(/[{}\s]/g, '').split(',').filter(Boolean).every((n) => n.startsWith('type'))) continue;
    const spec = match[3]!;
    out.push(spec.startsWith('.') ? resolve(dirname(file), spec) : spec);
  }
  return out;
}

/** A chain of static value imports from `start` to `target`, if any. */
function chainTo(start: string, target: string): string[] | undefined {
  const seen = new Set<string>([start]);
  const queue: string[][] = [[start]];
  while (queue.length > 0) {
    const path = queue.shift()!;
    for (const next of valueImports(path.at(-1)!)) {
      if (next === target) return [...path, next];
      if (!next.startsWith('/') || seen.has(next)) continue;
      seen.add(next);
      queue.push([...path, next]);
    }
  }
  return undefined;
}

describe('the media role at start', () => {
  it('reaches werift through no static import', () => {
    assert.equal(chainTo(ROLE, 'werift')?.join('\n  -> '), undefined);
  });

  it('reaches it through the session\'s peer once that is imported (the check sees a value import)', () => {
    const peer = resolve(dirname(ROLE), '../webrtc/peer.ts');
    assert.ok(chainTo(peer, 'werift'), 'peer.ts imports werift');
  });
});
