/**
 * The one channel-type registry. The spec warns that its binding list (10 types) and its global
 * channel catalog (11) disagree: the catalog has a type bindings lack, and spells one type with a
 * hyphen where the binding list has none. Every comparison of channel types goes through
 * `resolveChannelType`, which accepts every spelling and answers the canonical id.
 */
export interface ChannelType {
  id: string;
  label: string;
  /** Other spellings seen in the wild, all resolving to `id`. */
  aliases: string[];
  /** Whether a product binding may name this type (the catalog-only type may not). */
  bindable: boolean;
  /** Where marketplace categorisation takes the site part of `<channelType>:<siteId>`, and its default. */
  site?: { param: string; default: string };
  /**
   * A marketplace: it lists a product only in one of its categories (and wants a brand), so a
   * publication that cannot categorize a product fails it. The other types take a product
   * without a category.
   */
  marketplace: boolean;
}

export const CHANNEL_TYPES: ChannelType[] = [
  {
    id: 'mercadolibre',
    label: 'Mercado Libre',
    aliases: ['mercado-libre', 'meli'],
    marketplace: true,
    bindable: true,
    site: { param: 'site_id', default: 'MLM' },
  },
  {
    id: 't1',
    label: 'T1 retail group',
    aliases: ['t1-comercios', 'claroshop'],
    marketplace: true,
    bindable: true,
    site: { param: 'salesChannel', default: 'SR' },
  },
  {
    id: 'amazon',
    label: 'Amazon',
    aliases: [],
    marketplace: true,
    bindable: true,
    site: { param: 'marketplace_id', default: 'MX' },
  },
  {
    id: 'walmart',
    label: 'Walmart',
    aliases: [],
    marketplace: true,
    bindable: true,
    site: { param: 'country', default: 'MX' },
  },
  { id: 'shopify', label: 'Shopify', aliases: [], marketplace: false, bindable: true },
  { id: 'woocommerce', label: 'WooCommerce', aliases: ['woo-commerce'], marketplace: false, bindable: true },
  { id: 'liverpool', label: 'Liverpool', aliases: [], marketplace: true, bindable: true },
  { id: 'coppel', label: 'Coppel', aliases: [], marketplace: true, bindable: true },
  { id: 'tiktokshop', label: 'TikTok Shop', aliases: ['tiktok-shop'], marketplace: true, bindable: true },
  { id: 'custom', label: 'Custom HTTP API', aliases: ['custom-api'], marketplace: false, bindable: true },
  { id: 'pos', label: 'Point of sale', aliases: ['point-of-sale'], marketplace: false, bindable: false },
];

const BY_SPELLING = new Map<string, ChannelType>();
for (const t of CHANNEL_TYPES) for (const s of [t.id, ...t.aliases]) BY_SPELLING.set(s, t);

/** The canonical type for any accepted spelling (case-insensitive), or null. */
export function resolveChannelType(spelling: string): ChannelType | null {
  return BY_SPELLING.get(spelling.trim().toLowerCase()) ?? null;
}

/** Every spelling accepted where a bindable type is expected (for schemas and messages). */
export const BINDABLE_SPELLINGS = CHANNEL_TYPES.filter((t) => t.bindable).flatMap((t) => [t.id, ...t.aliases]);
