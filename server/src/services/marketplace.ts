import type { z } from 'zod';
import type { Extension, Marketplace } from '../catalog/marketplace.ts';
import { decodeCursor, encodeCursor, INVALID_CURSOR, type CursorScope } from '../core/cursor.ts';
import { ApiError } from '../core/errors.ts';
import {
  DEFAULT_PAGE_LIMIT, type categoriesResponseSchema, type ExtensionsQuery, type extensionsResponseSchema,
} from '../schemas/public.ts';

/** `GET /v1/public/marketplace/categories`, each with the number of its extensions. */
export function listCategories(market: Marketplace): z.output<typeof categoriesResponseSchema> {
  return {
    marketplace_version: market.version,
    categories: market.categories.map((c) => ({
      id: c.id, name: c.name, description: c.description,
      extension_count: market.extensions.filter((e) => e.category === c.id).length,
    })),
  };
}

function searchable(ext: Extension): string {
  return [ext.id, ext.name, ext.summary, ext.publisher, ...ext.tags].join('\n').toLowerCase();
}

/** Every whitespace-separated word of `q` must occur in the extension's text, case-insensitive. */
function matches(ext: Extension, words: readonly string[]): boolean {
  const text = searchable(ext);
  return words.every((w) => text.includes(w));
}

/**
 * `GET /v1/public/marketplace/extensions`: filtered by category and search text, ordered by id, in
 * pages of `limit`. The cursor holds the last id of a page and the filters; the next page starts
 * after that id, so no extension is lost or repeated across pages.
 */
export function searchExtensions(market: Marketplace, query: ExtensionsQuery): z.output<typeof extensionsResponseSchema> {
  const words = (query.q ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  const scope: CursorScope = { listing: 'extensions', filters: { category: query.category, q: words.join(' ') || undefined } };
  const after = query.cursor === undefined ? undefined : decodeCursor(scope, query.cursor);
  if (after !== undefined && !market.extensions.some((e) => e.id === after)) throw new ApiError('invalid_request', INVALID_CURSOR);
  const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
  const selected = market.extensions.filter((e) =>
    (query.category === undefined || e.category === query.category)
    && (after === undefined || e.id > after)
    && matches(e, words));
  const page = selected.slice(0, limit);
  const last = page[page.length - 1];
  return {
    marketplace_version: market.version,
    extensions: page.map((e) => ({ ...e, tags: [...e.tags], pricing: { ...e.pricing } })),
    next_cursor: selected.length > limit && last ? encodeCursor(scope, last.id) : null,
  };
}
