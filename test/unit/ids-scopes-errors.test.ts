import { newId, newSecret } from '../../shared/ids';
import { parseScopes, SCOPES } from '../../shared/auth/scopes';
import { AppError, errors } from '../../shared/errors/catalog';
import { areaOf } from '../../api/middleware/errors';
import { workflowIdFor } from '../../shared/temporal/workflow-ids';

test('job ids carry their prefix and sort by creation time', () => {
  const early = newId('csvimp', Date.UTC(2026, 0, 1));
  const late = newId('csvimp', Date.UTC(2026, 0, 2));
  expect(early).toMatch(/^csvimp_[0-9A-HJKMNP-TV-Z]{26}$/);
  expect(early < late).toBe(true);
  expect(newId('x')).not.toBe(newId('x'));
  expect(newSecret('bok')).toMatch(/^bok_[A-Za-z0-9_-]{43}$/);
  expect(workflowIdFor('ten_1', 'csvimp_2')).toBe('ten_1/csvimp_2');
});

test('scopes: the spec list, `all`, and unknown names refused', () => {
  for (const s of ['orders:update', 'products:import', 'inventory:transfer', 'locations:delete'])
    expect(SCOPES).toContain(s);
  expect(parseScopes('all')).toEqual([...SCOPES]);
  expect(parseScopes(' products:read , orders:read ')).toEqual(['products:read', 'orders:read']);
  expect(() => parseScopes('products:read,products:fly')).toThrow('Unknown scope(s): products:fly');
  expect(() => parseScopes('all,orders:fly')).toThrow('Unknown scope(s): orders:fly');
});

test('one error, a code per area', () => {
  const e = errors.invalidToken();
  expect(e).toBeInstanceOf(AppError);
  expect([e.codeFor('orders'), e.codeFor('products'), e.codeFor('inventory'), e.codeFor('locations')]).toEqual([
    'auth:invalid_token',
    'auth:invalid_token',
    'bad-request/missing-tenant',
    'bad-request/missing-tenant',
  ]);
  expect(new AppError(409, 'duplicate-sku', 'x').codeFor('orders')).toBe('duplicate-sku');
  expect(areaOf('/v1/orders/abc')).toBe('orders');
  expect(areaOf('/inventory')).toBe('inventory');
  expect(areaOf('/locations/1/zones')).toBe('locations');
  expect(areaOf('/products/bulk/csv/import')).toBe('products');
  expect(areaOf('/v1')).toBe('other');
  expect(areaOf('/ordersx')).toBe('other');
});
