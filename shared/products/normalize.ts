import { randomUUID } from 'node:crypto';
import { resolveChannelType } from '../channels/channel-types';
import { newId } from '../ids';
import type { ProductInput } from './types';

/** A channel id is hex in any case (as the API takes it): stored and compared as the channel's own spelling. */
export const channelIdOf = (id: string) => (/^[0-9a-f]{24}$/i.test(id) ? id.toLowerCase() : id);

/**
 * The validated input as it is stored: SKUs upper-cased, variants pointing at their parent,
 * ids for every sub-item that may be referenced (variants, media, options, bindings, price and
 * cost entries, modifier groups and modifiers), BOM sequences in order, channel types canonical.
 * Ids the client sent are kept, so a PUT keeps the identity of what it does not change.
 */
export function normalizeProduct(input: ProductInput): ProductInput {
  const p = structuredClone(input);
  p.sku = p.sku.toUpperCase();
  const withId = <T extends { id?: string }>(items: T[] | undefined, prefix: string) => {
    for (const item of items ?? []) item.id ??= newId(prefix);
  };
  withId(p.media, 'med');
  withId(p.options, 'opt');
  withId(p.bindings, 'bnd');
  withId(p.priceSchemas, 'prc');
  withId(p.costs, 'cst');
  for (const b of p.bindings) b.type = resolveChannelType(b.type)!.id;
  for (const b of [...p.bindings, ...p.variants.flatMap((v) => v.bindings ?? [])])
    b.channelId = channelIdOf(b.channelId);
  for (const v of p.variants) {
    v.id ??= newId('var');
    v.sku = v.sku.toUpperCase();
    v.parentSku = p.sku;
    v.productSku = p.sku;
    withId(v.bindings, 'bnd');
    withId(v.priceSchemas, 'prc');
    withId(v.costs, 'cst');
  }
  for (const c of p.bundleConfig?.components ?? []) c.productSku = c.productSku.toUpperCase();
  p.billOfMaterials?.components.forEach((c, i) => {
    c.materialSku = c.materialSku.toUpperCase();
    c.sequence = i;
    for (const s of c.substitutes) s.materialSku = s.materialSku.toUpperCase();
  });
  if (p.modifiersConfig) {
    p.modifiersConfig.groups.forEach((g, i) => {
      g.id ??= randomUUID();
      g.code ??= `group-${i + 1}`;
      g.position ??= i;
      g.modifiers.forEach((m, j) => {
        m.id ??= randomUUID();
        m.position ??= j;
        for (const c of m.inventoryConsumption) c.sku = c.sku.toUpperCase();
      });
    });
    if (p.modifiersConfig.conditions)
      p.modifiersConfig.conditions.variantSkus = p.modifiersConfig.conditions.variantSkus.map((s) => s.toUpperCase());
  }
  return p;
}

/** Every SKU a product occupies in the tenant's one SKU space, with what holds it. */
export function skusOf(
  p: Pick<ProductInput, 'sku' | 'variants'>,
): { sku: string; kind: 'product' | 'variant'; field: string }[] {
  return [
    { sku: p.sku, kind: 'product' as const, field: 'sku' },
    ...p.variants.map((v, i) => ({ sku: v.sku, kind: 'variant' as const, field: `variants.${i}.sku` })),
  ];
}
