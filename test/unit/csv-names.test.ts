import { AppError } from '../../shared/errors/catalog';
import { allowedConfig, CONFIG_ALLOWLIST, importConfigSchema } from '../../shared/csv/import-config';
import { FORMATS, layoutFor } from '../../shared/csv/layouts/index';
import { ownEntry } from '../../shared/csv/layouts/values';
import { woocommerceLayout } from '../../shared/csv/layouts/woocommerce';
import { readProducts } from '../../shared/csv/read';
import { compile } from '../../shared/validation';

/**
 * Names a client or a file chooses (a format, a unit in a header, a config key) are looked up
 * among the service's own names only: never among what every object inherits.
 */

const INHERITED = ['__proto__', 'toString', 'constructor', 'hasOwnProperty', 'valueOf'];

describe('layoutFor', () => {
  test.each(FORMATS.map((f) => [f]))('%s is a layout', (format) => {
    expect(layoutFor(format).format).toBe(format);
  });

  test('no format is the native layout', () => {
    expect(layoutFor(undefined).format).toBe('native');
  });

  test.each(INHERITED.concat('xml'))('%s is an unsupported format', (format) => {
    let refusal: unknown = null;
    try {
      layoutFor(format);
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ status: 400, code: 'unsupported-format', extra: { field: 'format' } });
  });
});

describe('units named in a WooCommerce header', () => {
  const file = (unit: string) =>
    `Type,SKU,Name,Regular price,Weight (${unit}),Length (cm),Width (cm),Height (cm)\nsimple,W1,Thing,5,2,1,1,1\n`;

  test.each(['constructor', '__proto__', 'valueof'])(
    'Weight (%s) is an unknown unit: the row is refused, naming it',
    (unit) => {
      const [product] = readProducts(file(unit), woocommerceLayout).parsed;
      expect(product.body).toBeNull();
      expect(product.errors).toEqual([expect.stringContaining(`unknown weight unit "${unit}"`)]);
    },
  );

  test('Weight (kg) is kilograms', () => {
    const [product] = readProducts(file('kg'), woocommerceLayout).parsed;
    expect(product.body).toMatchObject({ shipping: { weight: 2, weightUnit: 'kg' } });
  });

  test('ownEntry finds own entries only', () => {
    const table = { g: 1, kg: 1000 };
    expect(ownEntry(table, 'kg')).toBe(1000);
    for (const name of INHERITED) expect(ownEntry(table, name)).toBeUndefined();
  });
});

describe('the async import config', () => {
  const validate = compile(importConfigSchema);

  test('the allowlist is what the schema names, as the spec lists it', () => {
    expect([...CONFIG_ALLOWLIST].sort()).toEqual(
      [
        'format',
        'mappings',
        'fieldsToUpdate',
        'skipErrorRows',
        'operationName',
        'createIfNotExists',
        'enableSideEffects',
      ].sort(),
    );
  });

  test('other keys pass validation whatever their value, and are dropped; the defaults fill what is left out', () => {
    const config = { createIfNotExists: true, maxRows: 'many', chunkSize: -1, toString: 'x' };
    expect(validate(config)).toBe(true);
    expect(allowedConfig(config)).toEqual({
      format: 'native',
      skipErrorRows: true,
      createIfNotExists: true,
      enableSideEffects: false,
    });
    expect(allowedConfig(undefined)).toEqual({
      format: 'native',
      skipErrorRows: true,
      createIfNotExists: false,
      enableSideEffects: false,
    });
  });

  test.each([
    [{ format: '__proto__' }],
    [{ format: 'constructor' }],
    [{ fieldsToUpdate: ['constructor'] }],
    [{ fieldsToUpdate: ['sku'] }],
    [{ mappings: { constructor: 'sku' } }],
    [{ skipErrorRows: 'yes' }],
  ])('%j is refused', (config) => {
    expect(validate(config)).toBe(false);
  });
});
