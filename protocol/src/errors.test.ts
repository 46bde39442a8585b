import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ERROR_STATUS, isErrorCode, type ErrorCode } from './errors.ts';

// docs/reference/errors.md, "Codes of the token API", row by row: status, error codes, condition
const SPEC_ROWS: readonly (readonly [number, readonly ErrorCode[], string])[] = [
  [400, ['invalid_request'], 'a field is missing or not allowed'],
  [401, ['invalid_credentials'], 'App ID or App Secret not valid'],
  [403, ['scope_denied'], 'credential lacks the publisher or the subscriber scope'],
  [403, ['project_archived'], 'the project is archived'],
  [403, ['ip_not_allowed'], "caller address is outside the credential's allowlist"],
  [403, ['server_side_only'], 'called from a browser (Origin header present)'],
  [404, ['unknown_handle'], 'revocation handle not valid for this project'],
  [429, ['rate_limited'], 'a rate limit was exceeded'],
  [502, ['issuer_unavailable', 'turn_unavailable', 'signaling_unavailable'], 'temporary; retry with backoff'],
];

const DOC = new URL('../../docs/reference/errors.md', import.meta.url);

/** The rows of the first Markdown table whose header is `| Code | Status | Meaning |`. */
function parseErrorTable(markdown: string): { code: string; status: number; meaning: string }[] {
  const lines = markdown.split('\n');
  const header = lines.findIndex((l) => /^\|\s*Code\s*\|\s*Status\s*\|\s*Meaning\s*\|\s*$/.test(l));
  assert.notEqual(header, -1, 'docs/reference/errors.md has a | Code | Status | Meaning | table');
  assert.match(lines[header + 1] ?? '', /^\|(\s*:?-{3,}:?\s*\|){3}\s*$/, 'the header is followed by a separator row');
  const rows: { code: string; status: number; meaning: string }[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line.slice(1, line.endsWith('|') ? -1 : undefined).split('|').map((c) => c.trim());
    assert.equal(cells.length, 3, `three cells in ${line}`);
    const [code, status, meaning] = cells as [string, string, string];
    const match = /^`([a-z_]+)`$/.exec(code);
    assert.ok(match, `the code cell is one code in backticks: ${code}`);
    assert.match(status, /^\d{3}$/, `the status cell is an HTTP status: ${status}`);
    rows.push({ code: match[1]!, status: Number(status), meaning });
  }
  return rows;
}

describe('ERROR_STATUS keeps the token API codes of docs/reference/errors.md', () => {
  for (const [status, codes, condition] of SPEC_ROWS) {
    it(`${status} ${codes.join(', ')}: ${condition}`, () => {
      for (const code of codes) {
        assert.ok(Object.hasOwn(ERROR_STATUS, code), `${code} is in the catalogue`);
        assert.equal(ERROR_STATUS[code], status, code);
      }
    });
  }

  it('gives every code a 4xx or 5xx status', () => {
    for (const [code, status] of Object.entries(ERROR_STATUS)) {
      assert.ok(Number.isInteger(status) && status >= 400 && status <= 599, `${code}: ${status}`);
      assert.match(code, /^[a-z]+(_[a-z]+)*$/, 'codes are snake_case');
    }
  });

  it('keeps the documented codes for the conditions docs/reference/errors.md names (no synonyms)', () => {
    // the platform's own codes serve endpoints outside the token API and must not shadow a token API code
    const specCodes = new Set(SPEC_ROWS.flatMap(([, codes]) => codes));
    const own = Object.keys(ERROR_STATUS).filter((c) => !specCodes.has(c as ErrorCode)).sort();
    assert.deepEqual(own, ['conflict', 'internal_error', 'not_found', 'unauthenticated', 'unavailable']);
  });
});

describe('isErrorCode', () => {
  it('accepts every code of the catalogue', () => {
    for (const code of Object.keys(ERROR_STATUS)) assert.equal(isErrorCode(code), true, code);
  });
  it('rejects anything else, including inherited property names', () => {
    for (const value of ['', 'INVALID_REQUEST', 'invalid-request', 'toString', '__proto__', 'constructor', 'hasOwnProperty', 400, null, undefined, {}]) {
      assert.equal(isErrorCode(value), false, String(value));
    }
  });
});

describe('docs/reference/errors.md', () => {
  const rows = parseErrorTable(readFileSync(DOC, 'utf8'));

  it('lists every code of the catalogue exactly once', () => {
    const codes = rows.map((r) => r.code);
    assert.equal(new Set(codes).size, codes.length, 'no code is listed twice');
    assert.deepEqual([...codes].sort(), Object.keys(ERROR_STATUS).sort());
  });

  it('gives each code the status of the catalogue', () => {
    for (const row of rows) {
      assert.equal(row.status, ERROR_STATUS[row.code as ErrorCode], row.code);
    }
  });

  it('explains each code', () => {
    for (const row of rows) assert.ok(row.meaning.length >= 20, `${row.code} has a meaning`);
  });
});
