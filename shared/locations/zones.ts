import { defineCollection } from '../db/collection';

/**
 * A zone inside a location (an aisle, a shelf, a cold room). Its `_id` is
 * `<tenantId>:<locationId>:<CODE>`, so the insert itself decides that a code is used once per
 * location, also when creates race (the primary key is unique on MongoDB and FerretDB alike).
 */
export interface ZoneDoc {
  _id: string;
  tenantId: string;
  locationId: string;
  /** Upper case: codes are unique per location regardless of case. */
  code: string;
  name: string;
  type: ZoneType;
  createdAt: Date;
  updatedAt: Date;
  /** The Idempotency-Key run that created it (KeyedRun): a retry of that request finds it as its own. */
  createdByRun?: string;
}

export const ZONE_TYPES = ['zone'] as const;
export type ZoneType = (typeof ZONE_TYPES)[number];

/** Letters, digits, `.`, `_`, `-`; starts with a letter or digit; 1–50 characters (it appears in URLs). */
export const ZONE_CODE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,49}$';

export const locationZones = defineCollection<ZoneDoc>({
  name: 'location_zones',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, locationId: 1, code: 1 } }],
});

export function zoneKey(tenantId: string, locationId: string, code: string): string {
  return `${tenantId}:${locationId}:${normalizeZoneCode(code)}`;
}

export function normalizeZoneCode(code: string): string {
  return code.trim().toUpperCase();
}
