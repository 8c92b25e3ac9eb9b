import type { CreateIndexesOptions } from 'mongodb';

/**
 * A collection and its indexes, declared beside the domain that owns it and created at start-up.
 *
 * `tenant` collections are reached only through the tenant-scoped layer (tenant-db.ts), and each
 * of their indexes starts with tenantId. `system` collections hold what exists before a tenant is
 * known (tenants themselves, key hashes looked up to find the tenant); only auth code uses them.
 */
export interface IndexDef {
  key: Record<string, 1 | -1>;
  options?: Omit<CreateIndexesOptions, 'partialFilterExpression' | 'expireAfterSeconds'>;
}

export interface CollectionDef<T> {
  name: string;
  scope: 'tenant' | 'system';
  indexes: IndexDef[];
  /**
   * Keys of indexes an earlier version declared and this one does not: dropped at start-up where
   * they exist, so that no write keeps paying for an index nothing reads.
   */
  retiredIndexes?: IndexDef['key'][];
  /** Phantom member carrying the document type; never set. */
  readonly __doc?: T;
}

export function defineCollection<T>(def: Omit<CollectionDef<T>, '__doc'>): CollectionDef<T> {
  if (def.scope === 'tenant') {
    for (const index of def.indexes) {
      if (Object.keys(index.key)[0] !== 'tenantId') {
        throw new Error(`Index ${JSON.stringify(index.key)} of ${def.name} must start with tenantId`);
      }
    }
  }
  return def;
}
