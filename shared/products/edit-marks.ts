import type { ProductDoc } from './types';

/**
 * How many bulk operations a product remembers having written it: a retry of a page or chunk
 * asks within minutes, and an interrupted request's operation is ended after 15, while no product
 * takes twenty bulk writes in that time.
 */
export const EDITED_BY_KEPT = 20;

type Marked = Pick<ProductDoc, 'editedBy' | 'lastEditBy'>;

/** The product's editedBy once `operationId` has written it (set with the write, guarded by its version). */
export function editedByAfter(current: Marked, operationId: string): string[] {
  const kept = (current.editedBy ?? []).filter((id) => id !== operationId);
  return [...kept, operationId].slice(-EDITED_BY_KEPT);
}

/** Whether a write of `operationId` reached the product (whatever was written since). */
export function writtenBy(product: Marked | null | undefined, operationId: string): boolean {
  return !!product && (product.lastEditBy === operationId || !!product.editedBy?.includes(operationId));
}
