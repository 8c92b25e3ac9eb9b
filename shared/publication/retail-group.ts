import type { Filter } from 'mongodb';
import { Channels } from '../channels/channels';
import { listChannelProducts } from '../channels/connector';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { countedSkus, productStock } from '../inventory/stock-view';
import { pageWindow0 } from '../paging';
import { products } from '../products/collections';
import { presentListItem } from '../products/present';
import { syncStatusOf } from '../products/sync-status';
import { buildFilter } from '../products/query';
import type { ProductDoc } from '../products/types';
import { retailGroupChannel } from './channel-lookup';
import type { PublicationContext } from './context';
import { WITHOUT_BLOCKING_PROBLEMS } from './publication';
import { productsByIds } from './selection';

/** The retail-group listings' paging: `page` is 0-based there, as the spec gives those reads. */
export interface GroupPaging {
  page: number;
  limit: number;
  search?: string;
}

const NEWEST_FIRST = { createdAt: -1, _id: -1 } as const;

const boundTo = (channelId: string) => ({ 'bindings.channelId': channelId }) as Filter<ProductDoc>;

/** The channel's own catalog (its API), each product with the sync status our binding to the channel gives it. */
export async function channelCatalog(c: PublicationContext, channelId: string, paging: GroupPaging) {
  const channel = await retailGroupChannel(c, channelId);
  const { page, limit, search } = paging;
  const res = await listChannelProducts(
    {
      endpointUrl: channel.settings.endpointUrl,
      secret: new Channels(c.tenantDb, c.secretsKey).signingSecret(channel),
      timeoutMs: channel.settings.timeoutMs ?? 15_000,
    },
    { page, limit, search },
  );
  if (!res.ok) {
    c.log.warn({ channelId, message: res.message }, 'retail-group API failed');
    throw new AppError(
      500,
      res.kind === 'unreachable' ? 't1-integration-error' : 't1-api-error',
      `The retail group's API failed: ${res.message}`,
    );
  }
  const list = catalogItems(res.body);
  if (!list)
    throw new AppError(500, 't1-api-error', "The retail group's API answered a catalog that is not a list of products");
  const id = channel._id.toHexString();
  const ours = await c.tenantDb
    .collection(products)
    .find(boundTo(id), { projection: { sku: 1, bindings: 1, version: 1 } })
    .toArray();
  const byHandle = new Map<string, { sku: string; syncStatus: string }>();
  for (const p of ours as ProductDoc[]) {
    const b = (p.bindings as unknown as { channelId: string; handle: string; syncStatus?: string }[]).find(
      (x) => x.channelId === id,
    );
    if (b) byHandle.set(String(b.handle), { sku: p.sku, syncStatus: syncStatusOf(b, p.version) ?? 'pending' });
  }
  return {
    products: list.map((item) => {
      const handle = String(item.handle ?? item.id ?? item.sku ?? '');
      const mine = byHandle.get(handle) ?? byHandle.get(String(item.sku ?? ''));
      return { ...item, sku: item.sku ?? mine?.sku ?? null, syncStatus: mine?.syncStatus ?? 'unlinked' };
    }),
    page,
    limit,
  };
}

/** Our products already bound to the channel, newest first. */
export async function boundProducts(c: PublicationContext, channelId: string, paging: GroupPaging) {
  const channel = await retailGroupChannel(c, channelId);
  const filter = {
    $and: [boundTo(channel._id.toHexString()), paging.search ? buildFilter({ q: paging.search }).filter : {}],
  } as Filter<ProductDoc>;
  const col = c.tenantDb.collection(products);
  const [docs, total] = await Promise.all([
    col.find(filter, { sort: NEWEST_FIRST, ...pageWindow0(paging) }).toArray(),
    col.countDocuments(filter),
  ]);
  return {
    products: docs.map((d) => presentListItem(d as ProductDoc, new Set(['bindings']))),
    page: paging.page,
    limit: paging.limit,
    total,
  };
}

/**
 * Every active product that could be published on the channel (no blocking problem: it has an
 * image and a price), newest first, with its stock and whether it is bound to the channel;
 * `inStock` keeps those with stock (true) or without (false). The list pages in the database;
 * with `inStock`, whose stock lives in the ledger's balances, the candidates are read in batches
 * of their SKUs only, so a page never holds more than a batch and its own products in memory.
 */
export async function eligibleProducts(
  c: PublicationContext,
  channelId: string,
  paging: GroupPaging & { inStock?: boolean },
) {
  const channel = await retailGroupChannel(c, channelId);
  const filter = {
    $and: [
      buildFilter({ status: ['active'], ...(paging.search ? { q: paging.search } : {}) }).filter,
      WITHOUT_BLOCKING_PROBLEMS,
    ],
  } as Filter<ProductDoc>;
  const { docs, total } =
    paging.inStock === undefined
      ? await pageOf(c.tenantDb, filter, paging)
      : await pageByStock(c.tenantDb, filter, paging, paging.inStock);
  const stock = await productStock(c.tenantDb, docs);
  const id = channel._id.toHexString();
  return {
    products: docs.map((d) => ({
      ...presentListItem(d, new Set()),
      stock: stockOfProduct(d, stock),
      hasBinding: (d.bindings as unknown as { channelId: string }[]).some((b) => b.channelId === id),
    })),
    page: paging.page,
    limit: paging.limit,
    total,
  };
}

/** A product's units, its own SKU's and its variants', at every location. */
function stockOfProduct(
  d: Pick<ProductDoc, 'sku' | 'variants' | 'productType' | 'bundleConfig'>,
  stock: Map<string, { total: number }>,
): number {
  return countedSkus(d).reduce((n, s) => n + (stock.get(s)?.total ?? 0), 0);
}

async function pageOf(tenantDb: TenantDb, filter: Filter<ProductDoc>, paging: GroupPaging) {
  const col = tenantDb.collection(products);
  const [docs, total] = await Promise.all([
    col.find(filter, { sort: NEWEST_FIRST, ...pageWindow0(paging) }).toArray(),
    col.countDocuments(filter),
  ]);
  return { docs: docs as ProductDoc[], total };
}

type Candidate = Pick<ProductDoc, '_id' | 'sku' | 'variants' | 'productType' | 'bundleConfig'>;

/** SKUs whose balances one read asks for (a bounded condition, whatever the products' variants). */
const STOCK_READ_SKUS = 1000;

/**
 * A page of the products with (or without) stock. Stock is not on the product, so the candidates
 * are read in order with their SKUs only and their balances asked in bounded batches; those that
 * match are counted, and only the page's own products are read whole.
 */
async function pageByStock(tenantDb: TenantDb, filter: Filter<ProductDoc>, paging: GroupPaging, inStock: boolean) {
  const { skip, limit } = pageWindow0(paging);
  const onPage: string[] = [];
  let total = 0;
  let batch: Candidate[] = [];
  let skus = 0;
  const settle = async () => {
    const stock = await productStock(tenantDb, batch);
    for (const d of batch) {
      if (stockOfProduct(d, stock) > 0 !== inStock) continue;
      if (total >= skip && total < skip + limit) onPage.push(d._id.toHexString());
      total++;
    }
    batch = [];
    skus = 0;
  };
  const candidates = tenantDb
    .collection(products)
    .find(filter, { sort: NEWEST_FIRST, projection: { sku: 1, 'variants.sku': 1, productType: 1, bundleConfig: 1 } });
  for await (const d of candidates) {
    const doc = d as Candidate;
    if (skus + 1 + (doc.variants?.length ?? 0) > STOCK_READ_SKUS && batch.length) await settle();
    batch.push({ ...doc, variants: doc.variants ?? [] });
    skus += 1 + (doc.variants?.length ?? 0);
  }
  if (batch.length) await settle();
  return { docs: await productsByIds(tenantDb, onPage), total };
}

/** The products of a catalog answer (a list, or `{products}` / `{items}`), or null when it is no list of objects. */
function catalogItems(body: unknown): Record<string, unknown>[] | null {
  const isObject = (x: unknown): x is Record<string, unknown> =>
    typeof x === 'object' && x !== null && !Array.isArray(x);
  const list = Array.isArray(body)
    ? body
    : !isObject(body)
      ? null
      : Array.isArray(body.products)
        ? body.products
        : Array.isArray(body.items)
          ? body.items
          : [];
  return list && list.every(isObject) ? list : null;
}
