import { defineCollection } from '../db/collection';
import type { ProductDoc } from './types';

export const products = defineCollection<ProductDoc>({
  name: 'products',
  scope: 'tenant',
  indexes: [
    { key: { tenantId: 1, sku: 1 }, options: { unique: true } },
    { key: { tenantId: 1, createdAt: -1 } },
    { key: { tenantId: 1, status: 1, createdAt: -1 } },
    // a brand filter (with status, the default order: the embedded database answers the page
    // and its count from this index)
    { key: { tenantId: 1, brand: 1, status: 1, createdAt: -1, _id: -1 } },
    { key: { tenantId: 1, price: 1 } },
    { key: { tenantId: 1, tags: 1 } },
    { key: { tenantId: 1, 'variants.sku': 1 } },
    { key: { tenantId: 1, 'bindings.channelId': 1 } },
    { key: { tenantId: 1, 'category.id': 1 } },
    // search (search.ts): an unanchored regex scans the tenant's keys of this index, not its
    // documents; the default order's keys are here too, so that the embedded database orders a
    // search page from the index (docs/servers.md)
    { key: { tenantId: 1, search: 1, createdAt: -1, _id: -1 } },
  ],
  // replaced by the brand and search indexes above, which also hold the default order
  retiredIndexes: [
    { tenantId: 1, brand: 1 },
    { tenantId: 1, search: 1 },
  ],
});

/**
 * The tenant's one SKU space: a product's SKU, each of its variants' SKUs, and each material's and
 * supply's SKU hold one entry here, and the unique index is the final guard against two records
 * sharing a SKU (a product and a variant, a material and a product, …), even under concurrent
 * writes, without transactions.
 */
export type SkuKind = 'product' | 'variant' | 'material' | 'supply';

export interface SkuClaim {
  tenantId: string;
  /** `<tenantId>:<SKU>`, so that looking a SKU up is a primary-key read (see TenantCollection.findOne). */
  _id: string;
  sku: string;
  /** The holder: a product's id (hex) for product and variant SKUs; a material's or supply's record `_id` (`<tenantId>:<SKU>`). */
  productId: string;
  kind: SkuKind;
  createdAt: Date;
  /** When a bundle write last named it as a component: see sku-marks.ts. */
  namedAt?: Date;
  /** Set by a delete or a write giving the SKU up while it decides: see sku-marks.ts. */
  leavingAt?: Date;
}

export const productSkus = defineCollection<SkuClaim>({
  name: 'product_skus',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, sku: 1 }, options: { unique: true } }, { key: { tenantId: 1, productId: 1 } }],
});

export function claimId(tenantId: string, sku: string): string {
  return `${tenantId}:${sku.toUpperCase()}`;
}
