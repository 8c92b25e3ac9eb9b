import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { Catalog } from '../products/catalog';

export function skuNotFound(sku: string): AppError {
  return new AppError(404, 'not-found', `No product or variant with SKU ${sku}`, { field: 'sku' });
}

/** A SKU of the tenant (a product's or a variant's), upper-cased as stored; 404 not-found otherwise. */
export async function knownSku(tenantDb: TenantDb, raw: string): Promise<string> {
  const sku = raw.trim().toUpperCase();
  if (!(await new Catalog(tenantDb).skuOwner(sku))) throw skuNotFound(sku);
  return sku;
}
