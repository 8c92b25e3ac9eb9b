import type { OrderDoc } from './collections';

/** Where a client goes next from an order. */
export function orderLinks(id: string, which: ('self' | 'prepare' | 'cancel')[]) {
  const all = { self: `/orders/${id}`, prepare: `/orders/${id}/prepare`, cancel: `/orders/${id}/cancel` };
  return Object.fromEntries(which.map((k) => [k, all[k]]));
}

/** An order as the API answers it: in the orders area and in GET /customers/{id}/orders. */
export function presentOrder(doc: OrderDoc) {
  const {
    _id,
    tenantId: _t,
    audit: _a,
    redaction: _r,
    createdAt,
    updatedAt,
    stock,
    stockReturnPending: _p,
    ...rest
  } = doc;
  const id = _id.toHexString();
  return {
    _id: id,
    ...rest,
    // what accepting it took (the activity log has each effect); the ledger keys stay inside
    ...(stock
      ? {
          stock: {
            locationId: stock.locationId,
            sales: stock.sales.map((s) => ({ sku: s.sku, quantity: s.quantity })),
            consumptionId: stock.consumptionId,
          },
        }
      : {}),
    createdAt: createdAt.toISOString(),
    updatedAt: updatedAt.toISOString(),
    _links: orderLinks(id, ['self', 'prepare', 'cancel']),
  };
}
