/**
 * Paging, one way for every list: 1-based `page`, a `limit` with a per-list maximum and default,
 * and the window they select. The schemas here are the ones the OpenAPI document shows.
 */

/** The highest page a list accepts: beyond it a page is never real, and far beyond it the skip overflows what the database takes (a 500). */
export const MAX_PAGE = 1_000_000;

/** The `page` parameter of every 1-based list. */
export const PAGE_PARAM = { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 } as const;

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

/** A page of a list already in memory. */
export function slicePage<T>(all: readonly T[], { page, limit }: PageRequest): T[] {
  return all.slice((page - 1) * limit, page * limit);
}
