import { createHash } from 'node:crypto';
import { ApiError } from './errors.ts';
import { fromB64u } from './encoding.ts';

/**
 * Opaque pagination cursors: the last id of a page, bound to the listing and its filters, so a
 * cursor is refused (400) on another listing or with other filters instead of skipping items.
 */
export interface CursorScope {
  /** The listing, e.g. `extensions`. */
  readonly listing: string;
  /** The filters the cursor was issued for; order matters not. */
  readonly filters: Readonly<Record<string, string | undefined>>;
}

const MAX_CURSOR_LENGTH = 512;
export const INVALID_CURSOR = 'cursor is not valid for this listing: pass next_cursor of the previous page with the same filters';

function fingerprint(scope: CursorScope): string {
  const filters = Object.entries(scope.filters).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash('sha256').update(JSON.stringify([scope.listing, filters])).digest('base64url').slice(0, 16);
}

export function encodeCursor(scope: CursorScope, lastId: string): string {
  return Buffer.from(JSON.stringify({ v: 1, f: fingerprint(scope), a: lastId })).toString('base64url');
}

/** The last id the cursor names; 400 invalid_request when it is malformed or issued for other filters. */
export function decodeCursor(scope: CursorScope, cursor: string): string {
  const invalid = new ApiError('invalid_request', INVALID_CURSOR);
  if (cursor.length > MAX_CURSOR_LENGTH) throw invalid;
  const bytes = fromB64u(cursor);
  if (!bytes) throw invalid;
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw invalid;
  }
  if (typeof parsed !== 'object' || parsed === null) throw invalid;
  const { v, f, a } = parsed as Record<string, unknown>;
  if (v !== 1 || f !== fingerprint(scope) || typeof a !== 'string' || a.length === 0 || a.length > 128) throw invalid;
  return a;
}
