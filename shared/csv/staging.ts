import { defineCollection } from '../db/collection';

/**
 * A chunk of an async import's products, parsed once and staged as one document, so chunks can be
 * applied (and retried) one by one, each for one read.
 */
export interface StagedChunk {
  _id: string; // `${jobId}:${index}`
  tenantId: string;
  jobId: string;
  /** The index of its first product in the file's products. */
  index: number;
  /** The products as JSON text: FerretDB stores and reads one string far faster than the same nested documents. */
  productsJson: string;
}

/** Each failed row of an async import, for the error report. */
export interface ImportRowError {
  _id: string; // `${jobId}:${row}`
  tenantId: string;
  jobId: string;
  row: number;
  sku: string | null;
  message: string;
}

export const importStaging = defineCollection<StagedChunk>({
  name: 'import_staging',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, jobId: 1, index: 1 } }],
});

export const importErrors = defineCollection<ImportRowError>({
  name: 'import_errors',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, jobId: 1, row: 1 } }],
});

/**
 * The SKUs an async import's dry pass (skipErrorRows false) found among its products, one per
 * SKU, naming the product (its place in the file) that holds it: a second product of the file
 * with that SKU, in whatever chunk, is a failed row, so nothing is written.
 */
export interface ImportSkuClaim {
  _id: string; // `${jobId}:${sku}`
  tenantId: string;
  jobId: string;
  product: number;
}

export const importSkuClaims = defineCollection<ImportSkuClaim>({
  name: 'import_sku_claims',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, jobId: 1 } }],
});
