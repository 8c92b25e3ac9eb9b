import { resolveChannelType } from '../channels/channel-types';
import type { ChannelDoc } from '../channels/channels';
import type { ProductDoc } from '../products/types';

/**
 * Where a product's marketplace category for a channel is kept: a metafield of namespace
 * `mkt_category` whose key is `<channelType>:<siteId>`. The site part is the channel's own
 * `settings.siteId` when it has one, else its type's default (mercadolibre site_id MLM, t1
 * salesChannel SR, amazon marketplace_id MX, walmart country MX); a type with no site parameter
 * uses `default`. Two channels of one type and site share the assignment, as they share the
 * marketplace's category tree.
 */
export const CATEGORY_NAMESPACE = 'mkt_category';
export const NO_SITE = 'default';

/** The limits of an assigned category (the id's is the spec's; the name's and the depth's are ours). */
export const CATEGORY_ID_MAX = 100;
export const CATEGORY_NAME_MAX = 200;
/** Levels of a category path, root first: deeper than any marketplace tree we publish to. */
export const CATEGORY_PATH_MAX_DEPTH = 12;

export type CategorySource = 'manual' | 'suggested';

/** The metafield's value: which category, where it came from, when, and for which channel. */
export interface CategoryAssignment {
  id: string;
  name: string | null;
  /** Names from the root down, when known. */
  path: string[] | null;
  source: CategorySource;
  channelId: string;
  assignedAt: string;
}

export interface CategorySite {
  channelType: string;
  siteId: string;
  /** `<channelType>:<siteId>`, the metafield key. */
  key: string;
}

export function categorySite(channel: Pick<ChannelDoc, 'type' | 'settings'>): CategorySite {
  const type = resolveChannelType(channel.type);
  const channelType = type?.id ?? channel.type;
  const siteId = channel.settings.siteId?.trim() || type?.site?.default || NO_SITE;
  return { channelType, siteId, key: `${channelType}:${siteId}` };
}

type Metafield = ProductDoc['metafields'][number];

const isAssignment = (v: unknown): v is CategoryAssignment =>
  v !== null && typeof v === 'object' && typeof (v as CategoryAssignment).id === 'string';

/** The product's category under a key, or null (a metafield that is not an assignment counts as none). */
export function assignmentOf(p: Pick<ProductDoc, 'metafields'>, key: string): CategoryAssignment | null {
  const m = (p.metafields ?? []).find((x) => x.namespace === CATEGORY_NAMESPACE && x.key === key);
  return m && isAssignment(m.value) ? m.value : null;
}

/** The metafields with the assignment under `key` put in place of any earlier one (others kept in order). */
export function withAssignment(metafields: Metafield[], key: string, value: CategoryAssignment): Metafield[] {
  const field: Metafield = { namespace: CATEGORY_NAMESPACE, key, type: 'json', value };
  const i = metafields.findIndex((m) => m.namespace === CATEGORY_NAMESPACE && m.key === key);
  return i < 0 ? [...metafields, field] : metafields.map((m, j) => (j === i ? field : m));
}

/** Whether an assignment already says this (same category, same source): writing it again changes nothing. */
export function sameAssignment(a: CategoryAssignment | null, b: Omit<CategoryAssignment, 'assignedAt'>): boolean {
  return (
    a !== null &&
    a.id === b.id &&
    a.name === b.name &&
    a.source === b.source &&
    a.channelId === b.channelId &&
    JSON.stringify(a.path) === JSON.stringify(b.path)
  );
}

/** A path as sent, `["Home", "Kitchen"]` or `"Home > Kitchen"`, as names root first (null when none). */
export function pathOf(path: string | string[] | null | undefined): string[] | null {
  if (path === undefined || path === null) return null;
  const parts = (Array.isArray(path) ? path : path.split('>')).map((s) => s.trim());
  return parts.length ? parts : null;
}
