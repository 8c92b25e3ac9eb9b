import { ObjectId } from 'mongodb';
import type { TenantDb } from '../db/tenant-db';
import { claimId, productSkus, products } from '../products/collections';
import type { ProductDoc } from '../products/types';

/** The products the SKUs name, by SKU; a variant's, a material's or a supply's SKU names none. */
export async function productsBySku(tenantDb: TenantDb, skus: string[]): Promise<Map<string, ProductDoc>> {
  const claims = await tenantDb.collection(productSkus).findByIds(skus.map((s) => claimId(tenantDb.tenantId, s)));
  const owners = claims.filter((c) => c.kind === 'product');
  const docs = await tenantDb.collection(products).findByIds(owners.map((c) => new ObjectId(c.productId)));
  const byId = new Map(docs.map((d) => [d._id.toHexString(), d as ProductDoc]));
  const out = new Map<string, ProductDoc>();
  for (const c of owners) {
    const doc = byId.get(c.productId);
    if (doc && doc.sku === c.sku) out.set(c.sku, doc);
  }
  return out;
}

/** Why a SKU names no product: the same answer for an unknown SKU and another tenant's. */
export function notFound(tenantHolds: 'variant' | 'material' | 'supply' | null): string {
  if (tenantHolds === 'variant') return 'Product not found: this is a variant SKU; assign the category to its product';
  if (tenantHolds) return `Product not found: this SKU is a ${tenantHolds}, not a product`;
  return 'Product not found';
}
