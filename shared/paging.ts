/**
 * Paging, one way for every list: 1-based `page`, a `limit` with a per-list maximum and default,
 * and the window they select. The schemas here are the ones the OpenAPI document shows.
 */

/** The highest page a list accepts: beyond it a page is never real, and far beyond it the skip overflows what the database takes (a 500). */
export const MAX_PAGE = 1_000_000;

/** The `page` parameter of every 1-based list. */
export const PAGE_PARAM = { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 } as const;

/** The `page` parameter of the lists the spec pages from 0 (materials, supplies, retail-group listings). */
export const PAGE0_PARAM = {
  type: 'integer',
  minimum: 0,
  maximum: MAX_PAGE,
  default: 0,
  description: '0-based',
} as const;

/** A list's `limit` parameter. */
export function limitParam(maximum: number, defaultLimit: number) {
  return { type: 'integer', minimum: 1, maximum, default: defaultLimit } as const;
}

export interface PageRequest {
  page: number;
  limit: number;
}

/** The database window of a page: `find(filter, { ...pageWindow(q) })`. */
export function pageWindow({ page, limit }: PageRequest): { skip: number; limit: number } {
  return { skip: (page - 1) * limit, limit };
}

/** The database window of a 0-based page. */
export function pageWindow0({ page, limit }: PageRequest): { skip: number; limit: number } {
  return pageWindow({ page: page + 1, limit });
}

/** A page of a list already in memory. */
export function slicePage<T>(all: readonly T[], { page, limit }: PageRequest): T[] {
  return all.slice((page - 1) * limit, page * limit);
}
