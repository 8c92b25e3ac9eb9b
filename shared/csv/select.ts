import type { Filter } from 'mongodb';
import { AppError } from '../errors/catalog';
import { parseProductId } from '../products/catalog';
import { buildFilter, type ProductFilters } from '../products/query';
import type { ProductDoc } from '../products/types';

export interface Selection {
  selection: string;
  productIds?: string[];
  filters?: ProductFilters;
}

/** The products an export selects, as a filter; the errors are the spec's CSV export codes. */
export function selectionFilter(body: Selection): Filter<ProductDoc> {
  if (!['selected', 'filter', 'all'].includes(body.selection))
    throw new AppError(400, 'invalid-selection', 'selection must be selected, filter or all', { field: 'selection' });
  if (body.selection === 'selected' && !body.productIds?.length)
    throw new AppError(400, 'missing-products', 'selection "selected" needs productIds', { field: 'productIds' });
  if (body.selection === 'filter' && !body.filters)
    throw new AppError(400, 'missing-filters', 'selection "filter" needs filters', { field: 'filters' });
  if (body.selection === 'selected') {
    const ids = body.productIds!.map(parseProductId).filter((x) => x !== null);
    const skus = body.productIds!.map((s) => s.toUpperCase());
    return { $or: [{ _id: { $in: ids } }, { sku: { $in: skus } }] } as Filter<ProductDoc>;
  }
  if (body.selection === 'filter') return buildFilter(body.filters!).filter;
  return {};
}
