import type { CategoryAssignment } from '../categories/assignment';
import type { ProductDoc } from '../products/types';
import { resolveChannelType } from './channel-types';

/** A media item that is an image (a video, an audio or a document is no image for a channel). */
export const isImage = (m: Record<string, unknown>): boolean => (m.type ?? 'image') === 'image';

export interface PayloadOptions {
  includeVariants: boolean;
  includeInventory: boolean;
  /** Units available per SKU (at options.locationId, or everywhere), when inventory is included. */
  stock: (sku: string) => number;
  /** The marketplace site (site_id, salesChannel, marketplace_id, country), else the type's default. */
  siteId?: string;
  targetMarketplaces?: string[];
  /** The product's marketplace category on this channel, when it has one. */
  category?: CategoryAssignment | null;
}

/** What every channel gets: the product in neutral terms. */
function basePayload(p: ProductDoc, o: PayloadOptions) {
  const variants = o.includeVariants
    ? p.variants.map((v) => ({
        sku: v.sku,
        title: v.title?.value ?? null,
        price: v.price ?? p.price,
        ...(o.includeInventory ? { stock: o.stock(v.sku) } : {}),
      }))
    : [];
  const ownStock = o.includeInventory
    ? o.stock(p.sku) + (o.includeVariants ? 0 : p.variants.reduce((n, v) => n + o.stock(v.sku), 0))
    : undefined;
  return {
    sku: p.sku,
    title: p.title?.value ?? null,
    description: (p as { description?: { value?: string } }).description?.value ?? null,
    price: p.price,
    currency: p.currency,
    status: p.status,
    brand: p.brand ?? null,
    category: p.category ?? null,
    images: (p.media ?? []).filter(isImage).map((m) => m.src),
    marketplaceCategory: o.category ? { id: o.category.id, name: o.category.name, path: o.category.path } : null,
    ...(ownStock !== undefined ? { stock: ownStock } : {}),
    variants,
  };
}

type Mapper = (base: ReturnType<typeof basePayload>, o: PayloadOptions) => Record<string, unknown>;

/**
 * Per-type payloads on top of the generic connector. The marketplace types carry their site the
 * way the spec names it (with its default); the others get the neutral payload.
 */
const MAPPERS: Record<string, Mapper> = {
  mercadolibre: (b, o) => ({
    ...b,
    site_id: o.siteId ?? 'MLM',
    listing_type_id: 'gold_special',
    ...(b.marketplaceCategory ? { category_id: b.marketplaceCategory.id } : {}),
    available_quantity: b.stock ?? null,
  }),
  t1: (b, o) => ({ ...b, salesChannel: o.siteId ?? 'SR' }),
  amazon: (b, o) => ({
    ...b,
    marketplace_id: o.siteId ?? 'MX',
    ...(o.targetMarketplaces?.length ? { marketplaceIds: o.targetMarketplaces } : {}),
  }),
  walmart: (b, o) => ({ ...b, country: o.siteId ?? 'MX' }),
};

export function channelPayload(type: string, product: ProductDoc, o: PayloadOptions): Record<string, unknown> {
  const base = basePayload(product, o);
  const mapper = MAPPERS[resolveChannelType(type)?.id ?? type];
  return mapper ? mapper(base, o) : base;
}
