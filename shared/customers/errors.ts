import { AppError, errors } from '../errors/catalog';

/**
 * The customers area's own refusals. Paths under /customers are area 'other' (api/middleware/errors.ts):
 * flat `{code, message, …}` bodies, 400 validation-error, 404 not-found.
 */
export const customerErrors = {
  notFound: (id: string) => {
    const shown = JSON.stringify(id.slice(0, 100));
    return errors.notFound(
      'not-found',
      /^[0-9a-f]{24}$/i.test(id)
        ? `No customer ${shown} in this tenant`
        : `No customer ${shown}: a customer id is 24 hexadecimal characters`,
    );
  },
  duplicateEmail: (email: string, holderId?: string) =>
    new AppError(
      409,
      'duplicate-email',
      `Another customer${holderId ? ` (${holderId})` : ''} already has the e-mail ${email} (e-mails are unique per tenant, in any case)`,
      { field: 'email', ...(holderId ? { details: { customerId: holderId } } : {}) },
    ),
  hasOrders: (id: string, orders: number) =>
    new AppError(
      409,
      'customer-has-orders',
      `Customer ${id} is referenced by ${orders} order${orders === 1 ? '' : 's'}; it cannot be deleted. To erase its personal data while the orders keep their totals and history, use POST /customers/${id}/redact`,
      { details: { orders } },
    ),
  redacted: (id: string) =>
    new AppError(
      409,
      'customer-redacted',
      `Customer ${id} was redacted: its personal data is gone and it can no longer be changed`,
    ),
  conflict: (id: string) =>
    new AppError(
      409,
      'conflict',
      `Customer ${id} kept changing while this request was applied; read it again and retry`,
    ),
};
