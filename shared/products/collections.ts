import { defineCollection } from '../db/collection';
import type { ProductDoc } from './types';

export const products = defineCollection<ProductDoc>({
  name: 'products',
  scope: 'tenant',
  indexes: [
    { key: { tenantId: 1, sku: 1 }, options: { unique: true } },
    { key: { tenantId: 1, createdAt: -1 } },
    { key: { tenantId: 1, status: 1, createdAt: -1 } },
    { key: { tenantId: 1, brand: 1 } },
    { key: { tenantId: 1, price: 1 } },
    { key: { tenantId: 1, tags: 1 } },
    { key: { tenantId: 1, 'variants.sku': 1 } },
    { key: { tenantId: 1, 'bindings.channelId': 1 } },
    { key: { tenantId: 1, 'category.id': 1 } },
  ],
});

/**
 * The tenant's one SKU space: a product's SKU and each of its variants' SKUs hold one entry
 * here, and the unique index is the final guard against two products (or a product and a
 * variant) sharing a SKU, even under concurrent writes, without transactions.
 */
export interface SkuClaim {
  tenantId: string;
  /** `<tenantId>:<SKU>`, so that looking a SKU up is a primary-key read (see TenantCollection.findOne). */
  _id: string;
  sku: string;
  productId: string;
  kind: 'product' | 'variant';
  createdAt: Date;
}

export const productSkus = defineCollection<SkuClaim>({
  name: 'product_skus',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, sku: 1 }, options: { unique: true } }, { key: { tenantId: 1, productId: 1 } }],
});

export function claimId(tenantId: string, sku: string): string {
  return `${tenantId}:${sku.toUpperCase()}`;
}
