import { ObjectId, type Filter } from 'mongodb';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { pageWindow, slicePage, type PageRequest } from '../paging';
import { Catalog, parseProductId } from '../products/catalog';
import { products } from '../products/collections';
import { buildFilter, type ProductFilters } from '../products/query';
import type { ProductDoc } from '../products/types';
import { MAX_PUBLICATION_PRODUCTS } from './publication';

export type SelectionMode = 'single' | 'selected' | 'filtered' | 'all';
export const SELECTION_MODES: readonly SelectionMode[] = ['single', 'selected', 'filtered', 'all'];
/** The modes of the spec's older `selectionMode` member (no `single`). */
export const LEGACY_SELECTION_MODES: readonly SelectionMode[] = ['selected', 'filtered', 'all'];

/** Which products a request means: a mode, with the ids or SKUs (single, selected) or the filters (filtered). */
export interface Selection {
  mode: SelectionMode;
  productIds?: string[];
  filters?: ProductFilters;
}

/**
 * The condition of a `filtered` selection. Filters that select nothing in particular once read
 * (empty lists, null filters, a blank search) are refused: run as they are, they would select the
 * whole catalog under a mode that promises a filter.
 */
export function filteredCondition(filters: ProductFilters | undefined): Filter<ProductDoc> {
  const { filter } = buildFilter(filters ?? {});
  if (!Object.keys(filter).length)
    throw new AppError(
      400,
      'bad-request',
      'The filters select nothing in particular (empty lists, null filters or a blank search): give at least one filter a value, or use mode all to select every product',
      { field: 'filters' },
    );
  return filter;
}

/** The condition of an `all` or `filtered` selection. */
const conditionOf = (selection: Selection): Filter<ProductDoc> =>
  selection.mode === 'all' ? {} : filteredCondition(selection.filters);

/**
 * The products a publication covers, as ids. productIds may be product ids or SKUs (a variant's
 * SKU selects its product); an id or SKU the tenant lacks is a 400 naming it.
 */
export async function resolveSelection(tenantDb: TenantDb, selection: Selection): Promise<string[]> {
  const { mode, productIds } = selection;
  const col = tenantDb.collection(products);
  if (mode === 'all' || mode === 'filtered') {
    const filter = conditionOf(selection);
    const docs = await col
      .find(filter, { projection: { _id: 1 }, sort: { createdAt: 1, _id: 1 }, limit: MAX_PUBLICATION_PRODUCTS + 1 })
      .toArray();
    if (docs.length > MAX_PUBLICATION_PRODUCTS)
      throw new AppError(
        400,
        'bad-request',
        `The selection has more than ${MAX_PUBLICATION_PRODUCTS} products; narrow it with filters`,
      );
    return docs.map((d) => d._id.toHexString());
  }
  const catalog = new Catalog(tenantDb);
  const ids: string[] = [];
  const unknown: string[] = [];
  for (const ref of productIds ?? []) {
    const byId = parseProductId(ref) ? await catalog.get(ref) : null;
    const owner = byId ? null : await catalog.skuOwner(ref.trim().toUpperCase());
    const id = byId ? byId._id.toHexString() : owner?.productId;
    if (id) ids.push(id);
    else unknown.push(ref);
  }
  if (unknown.length)
    throw new AppError(400, 'bad-request', `No product with id or SKU: ${unknown.slice(0, 20).join(', ')}`, {
      field: 'productIds',
      details: { unknown },
    });
  return [...new Set(ids)];
}

/**
 * One page of a selection, for validation: `all` and `filtered` read the page and count the
 * selection in the database, so a catalog of any size can be validated page by page (a
 * publication itself takes at most MAX_PUBLICATION_PRODUCTS).
 */
export async function selectionPage(
  tenantDb: TenantDb,
  selection: Selection,
  paging: PageRequest,
): Promise<{ docs: ProductDoc[]; total: number }> {
  if (selection.mode === 'all' || selection.mode === 'filtered') {
    const col = tenantDb.collection(products);
    const filter = conditionOf(selection);
    const [docs, total] = await Promise.all([
      col.find(filter, { sort: { createdAt: 1, _id: 1 }, ...pageWindow(paging) }).toArray(),
      col.countDocuments(filter),
    ]);
    return { docs: docs as ProductDoc[], total };
  }
  const ids = await resolveSelection(tenantDb, selection);
  return { docs: await productsByIds(tenantDb, slicePage(ids, paging)), total: ids.length };
}

/**
 * The products of some ids, in their order (ids the tenant lacks are left out): one read by primary
 * key (`$in`), where a read per id cost a publication batch of 250 as many round trips.
 */
export async function productsByIds(tenantDb: TenantDb, ids: string[]): Promise<ProductDoc[]> {
  const oids = ids.map((id) => new ObjectId(id));
  const found = await tenantDb.collection(products).findByIds(oids);
  const byId = new Map(found.map((d) => [d._id.toHexString(), d]));
  return oids.map((id) => byId.get(id.toHexString())).filter((d): d is ProductDoc => d !== undefined);
}
