import { ObjectId, type Filter } from 'mongodb';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { addStock, countedSkus, productIdsAvailableAt, productStock } from '../inventory/stock-view';
import { Locations } from '../locations/locations';
import { pageWindow, type PageRequest } from '../paging';
import { Catalog, notFound } from './catalog';
import { products } from './collections';
import { presentListItem, presentProduct, type Extend } from './present';
import { buildFilter, buildSort, searchClause, type ProductFilters } from './query';
import type { ProductDoc } from './types';

/** A page of a product list: which page, its sort (`-price`) and what to add to each item. */
export interface ListRequest extends PageRequest {
  sort: string;
  extend: ReadonlySet<Extend>;
}

/** Whether `extend` asks for the ledger's stock (inventory by location, variants[].stock). */
const wantsStock = (extend: ReadonlySet<Extend>) => extend.has('inventory') || extend.has('all');

/** The catalog reads of one tenant: lists with filters, search, counts, and single products with their stock. */
export class ProductReads {
  constructor(private readonly tenantDb: TenantDb) {}

  private get col() {
    return this.tenantDb.collection(products);
  }

  /** One page of the products matching `filters` (and among `onlyIds` when given), as list items. */
  async list(filters: ProductFilters, req: ListRequest, onlyIds?: string[]): Promise<Record<string, unknown>[]> {
    const { filter } = buildFilter(filters);
    const docs = (await this.col
      .find(this.among(filter, onlyIds), { sort: buildSort(req.sort), ...pageWindow(req) })
      .toArray()) as ProductDoc[];
    const items = docs.map((d) => presentListItem(d, req.extend));
    if (wantsStock(req.extend)) await addStock(this.tenantDb, docs, items, { inventory: true });
    return items;
  }

  /** How many products match; with a search term, also how it searched. */
  async count(filters: ProductFilters): Promise<{ count: number; searchStrategy?: string }> {
    const { filter, searchStrategy } = buildFilter(filters);
    const count = await this.col.countDocuments(filter);
    return searchStrategy ? { count, searchStrategy } : { count };
  }

  /** Token search: one page of the products every word matches, the total and the strategy. */
  async search(q: string, req: ListRequest) {
    const { clause, strategy } = searchClause(q);
    const [items, total] = await Promise.all([this.list({ q }, req), this.col.countDocuments(clause)]);
    return { products: items, total, page: req.page, limit: req.limit, searchStrategy: strategy };
  }

  /** One page of the products matching `filters`, with the total. */
  async query(filters: ProductFilters, req: ListRequest) {
    const { filter } = buildFilter(filters);
    const [items, total] = await Promise.all([this.list(filters, req), this.col.countDocuments(filter)]);
    return { products: items, total, page: req.page, limit: req.limit };
  }

  /** One page of the products that have stock at a location of the tenant (404 not-found otherwise). */
  async availableAt(locationId: string, filters: ProductFilters, req: ListRequest) {
    if (!(await new Locations(this.tenantDb).get(locationId)))
      throw new AppError(404, 'not-found', `No location ${locationId}`, { field: 'availableAt' });
    const catalog = new Catalog(this.tenantDb);
    const ids = await productIdsAvailableAt(this.tenantDb, locationId, (sku) => catalog.skuOwner(sku));
    const { filter } = buildFilter(filters);
    const total = ids.length ? await this.col.countDocuments(this.among(filter, ids)) : 0;
    return {
      data: ids.length ? await this.list(filters, req, ids) : [],
      meta: { page: req.page, limit: req.limit, total },
    };
  }

  /** A product in full; with `extend` inventory (or all) also its stock from the ledger. */
  async get(id: string, extend: ReadonlySet<Extend>): Promise<Record<string, unknown>> {
    const doc = await new Catalog(this.tenantDb).get(id);
    if (!doc) throw notFound(id);
    const item = presentProduct(doc);
    if (wantsStock(extend)) await addStock(this.tenantDb, [doc], [item], { inventory: true });
    return item;
  }

  /** The product a variant SKU belongs to (404 not-found otherwise). */
  async byVariantSku(rawSku: string) {
    const sku = rawSku.toUpperCase();
    const doc = await this.col.findOne({ 'variants.sku': sku } as never);
    if (!doc) throw new AppError(404, 'not-found', `No variant with SKU ${sku}`);
    return presentProduct(doc);
  }

  /** The values of `field` in the catalog with how many products have each, by value. */
  async distinctWithCounts(field: 'brand' | 'productKind') {
    const rows = await this.col
      .aggregate<{ _id: string; count: number }>([
        { $match: { [field]: { $exists: true, $ne: '' } } },
        { $group: { _id: `$${field}`, count: { $sum: 1 } } },
        { $sort: { _id: 1 } },
      ])
      .toArray();
    return rows.map((r) => ({ [field === 'brand' ? 'brand' : 'kind']: r._id, count: r.count }));
  }

  /**
   * One page of the tenant's products (newest first) with their stock at a location: per product,
   * its own SKU and each variant's. The location must be the tenant's (`unknownLocation` otherwise).
   */
  async withStockAt(locationId: string, page: PageRequest, unknownLocation: () => AppError) {
    if (!(await new Locations(this.tenantDb).get(locationId))) throw unknownLocation();
    const [docs, total] = await Promise.all([
      this.col.find({}, { sort: { createdAt: -1, _id: -1 }, ...pageWindow(page) }).toArray() as Promise<ProductDoc[]>,
      this.col.countDocuments({}),
    ]);
    const stock = await productStock(this.tenantDb, docs, locationId);
    const at = (sku: string) => stock.get(sku)?.total ?? 0;
    const items = docs.map((doc) => ({
      doc,
      stock: countedSkus(doc).reduce((n, s) => n + at(s), 0),
      variants: doc.variants.map((v) => ({ id: v.id, sku: v.sku, stock: at(v.sku) })),
    }));
    return { items, total };
  }

  private among(filter: Filter<ProductDoc>, ids?: string[]): Filter<ProductDoc> {
    return ids ? { $and: [filter, { _id: { $in: ids.map((id) => new ObjectId(id)) } }] } : filter;
  }
}
