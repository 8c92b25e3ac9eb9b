import type { ProductInput } from './types';

/**
 * The stored field a product search matches: the SKU, the variant SKUs, the title, the brand and
 * the tags, lower-cased, one per line. Every write of a product sets it (`withSearch`), so a
 * search is one condition on one short field, which an index {tenantId, search} serves on MongoDB
 * and which our FerretDB build tests in SQL without decoding the 5 KB product (docs/servers.md).
 * A search token has no whitespace, so it can never match across two lines: matching the joined
 * text is matching any one of the fields.
 */
export const SEARCH_FIELD = 'search';

type Searchable = Pick<ProductInput, 'sku' | 'variants' | 'title' | 'brand' | 'tags'>;

export function searchTextOf(p: Searchable): string {
  const parts = [p.sku, ...(p.variants ?? []).map((v) => v.sku), p.title?.value, p.brand, ...(p.tags ?? [])];
  return parts
    .filter((s): s is string => typeof s === 'string' && s !== '')
    .map((s) => s.toLowerCase())
    .join('\n');
}

/** The product as stored: with its search text. */
export function withSearch<T extends Searchable>(p: T): T & { search: string } {
  return { ...p, search: searchTextOf(p) };
}
