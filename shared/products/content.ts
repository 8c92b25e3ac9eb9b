import type { ProductDoc } from './types';

/** What the server keeps on a stored product beside its content: never sent back as input. */
const SERVER_FIELDS = new Set([
  '_id',
  'tenantId',
  'createdAt',
  'updatedAt',
  'version',
  'search',
  'lastEditBy',
  'editedBy',
]);

/**
 * A product's own content: the stored document without id, tenant, version, timestamps and search
 * text. What an edit reads and proposes, and the input a full update would send to keep it as it is.
 */
export function contentOf(doc: ProductDoc): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(doc)) if (!SERVER_FIELDS.has(k)) out[k] = v;
  return out;
}
