import type { Extension, Marketplace } from './catalog/marketplace.ts';
import { paginate, type CursorScope, type PageQuery } from '../core/cursor.ts';

/** `GET /v1/public/marketplace/categories`. */
export interface MarketplaceCategories {
  readonly marketplace_version: string;
  readonly categories: readonly { readonly id: string; readonly name: string; readonly description: string; readonly extension_count: number }[];
}

/** What `GET /v1/public/marketplace/extensions` asks for: a category, search words, a page. */
export interface ExtensionsQuery extends PageQuery {
  readonly category?: string | undefined;
  readonly q?: string | undefined;
}

/** One page of `GET /v1/public/marketplace/extensions`. */
export interface ExtensionsPage {
  readonly marketplace_version: string;
  readonly extensions: readonly Extension[];
  readonly next_cursor: string | null;
}

/** `GET /v1/public/marketplace/categories`, each with the number of its extensions. */
export function listCategories(market: Marketplace): MarketplaceCategories {
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
export async function searchExtensions(market: Marketplace, query: ExtensionsQuery): Promise<ExtensionsPage> {
  const words = (query.q ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  const scope: CursorScope = { listing: 'extensions', filters: { category: query.category, q: words.join(' ') || undefined } };
  const page = await paginate(scope, query, {
    has: (id) => market.extensions.some((e) => e.id === id),
    list: (afterId, limit) => market.extensions.filter((e) =>
      (query.category === undefined || e.category === query.category)
      && (afterId === undefined || e.id > afterId)
      && matches(e, words)).slice(0, limit),
  });
  return {
    marketplace_version: market.version,
    extensions: page.items.map((e) => ({ ...e, tags: [...e.tags], pricing: { ...e.pricing } })),
    next_cursor: page.nextCursor,
  };
}
