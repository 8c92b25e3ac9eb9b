import { allRoutes } from '../../api/routes';
import { RESERVED_PRODUCT_SKUS } from '../../shared/products/rules';

/**
 * `/products/{sku}/bom` and `/products/materials/{sku}` are both three segments: a product with
 * the SKU MATERIALS would have its BOM answered (or deleted) by the materials route. Every word
 * that can stand where a product's SKU does is a reserved SKU, and its own route is matched first.
 */
const split = (path: string) => path.split('/').filter(Boolean);
const param = (segment: string) => segment.startsWith(':');

const skuRoutes = allRoutes.filter((r) => split(r.path)[0] === 'products' && split(r.path)[1] === ':sku');
const wordRoutes = allRoutes.filter(
  (r) => split(r.path)[0] === 'products' && split(r.path)[1] && !param(split(r.path)[1]),
);

/** The word routes that a `/products/{sku}/…` route's request could reach with that word as the SKU. */
const collisions = skuRoutes.flatMap((a) =>
  wordRoutes
    .filter((b) => b.method === a.method && split(b.path).length === split(a.path).length)
    .filter((b) =>
      split(b.path)
        .slice(2)
        .every((s, i) => param(s) || param(split(a.path)[i + 2]) || s === split(a.path)[i + 2]),
    )
    .map((b) => ({ sku: a, word: b })),
);

test('the routes do collide (the check below checks something)', () => {
  expect(collisions.map((c) => split(c.word.path)[1]).sort()).toEqual(
    expect.arrayContaining(['materials', 'supplies']),
  );
});

test.each(collisions.map((c) => [`${c.sku.method} ${c.sku.path}`, c.word.path, c]))(
  '%s against %s: the word is a reserved SKU, and its route is matched first',
  (_a, _b, { sku, word }) => {
    expect(RESERVED_PRODUCT_SKUS).toContain(split(word.path)[1].toUpperCase());
    expect(allRoutes.indexOf(word)).toBeLessThan(allRoutes.indexOf(sku));
  },
);
