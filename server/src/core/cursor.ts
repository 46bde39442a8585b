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

/** The largest page of a listing, and the page size when `limit` is left out. */
export const MAX_PAGE_LIMIT = 100;
export const DEFAULT_PAGE_LIMIT = 20;

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

/** What a caller asks of a listing: a page size and the `next_cursor` of the page before. */
export interface PageQuery {
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
}

/** A listing ordered by id, in memory or in a store. */
export interface PageSource<T> {
  /** Whether the id a cursor names is still in the listing (a cursor past a vanished item is 400). */
  has(id: string): boolean | Promise<boolean>;
  /** Up to `limit` items after `afterId`, or from the start without one. */
  list(afterId: string | undefined, limit: number): readonly T[] | Promise<readonly T[]>;
}

/** One page of a listing and the cursor of the next, null on the last page. */
export interface Page<T> {
  readonly items: T[];
  readonly nextCursor: string | null;
}

/**
 * The page that `query` asks for: the items after the cursor's id, at most `limit` of them, and
 * a cursor bound to `scope` when more follow. A cursor of another scope, or past an item that is
 * gone, is 400 invalid_request.
 */
export async function paginate<T extends { readonly id: string }>(scope: CursorScope, query: PageQuery, source: PageSource<T>): Promise<Page<T>> {
  const afterId = query.cursor === undefined ? undefined : decodeCursor(scope, query.cursor);
  if (afterId !== undefined && !(await source.has(afterId))) throw new ApiError('invalid_request', INVALID_CURSOR);
  const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
  const found = await source.list(afterId, limit + 1);
  const items = found.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: found.length > limit && last ? encodeCursor(scope, last.id) : null };
}
