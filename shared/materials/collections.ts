import { defineCollection } from '../db/collection';

/**
 * Materials and supplies: what a kitchen, bakery or workshop buys and stocks. Each kind has its
 * own collection of records; both keep stock in one `material_stock` document per SKU and a
 * ledger of movements. Every `_id` is `<tenantId>:<SKU>`: the SKU claim's id (products/collections),
 * so the record, its stock and its claim are each one primary-key read away from the SKU.
 */
export type StockKind = 'material' | 'supply';
/** How messages name a record of each kind. */
export const KIND_LABEL: Record<StockKind, string> = { material: 'Material', supply: 'Supply' };
export type CostingMethod = 'fifo' | 'lifo' | 'average' | 'last_purchase';
export const COSTING_METHODS: CostingMethod[] = ['fifo', 'lifo', 'average', 'last_purchase'];
export type ExpirationPolicy = 'fefo' | 'costing_order';
export const RECORD_STATUSES = ['active', 'disabled', 'draft'] as const;
export type RecordStatus = (typeof RECORD_STATUSES)[number];
export const SUPPLY_CATEGORIES = ['packaging', 'shipping', 'office', 'cleaning', 'tools', 'labels', 'other'] as const;

export interface StockAlerts {
  minStock: number;
  reorderPoint: number;
  reorderQuantity: number;
  alertEmails: string[];
  alertEnabled: boolean;
}

export interface AlternativeUnit {
  code: string;
  name?: string;
  /** How many base units one of this unit is (a 25 kg bag: 25). */
  conversionFactor: number;
}

interface RecordBase {
  _id: string; // `<tenantId>:<SKU>`
  tenantId: string;
  sku: string;
  title: { value: string };
  description?: string;
  price?: number;
  currency: string;
  tags: string[];
  status: RecordStatus;
  stockAlerts: StockAlerts;
  alternativeUnits: AlternativeUnit[];
  createdAt: Date;
  updatedAt: Date;
  /** Raised by every write; a partial update is guarded by the version it read. */
  version: number;
  /** The Idempotency-Key run that created it (KeyedRun): a retry of that request finds it as its own. */
  createdByRun?: string;
  /** When a product write last named it (a BOM's component, a modifier's consumption): see holdNamed. */
  namedAt?: Date;
  /** Set by a delete while it decides: a write naming it then refuses it (see holdNamed). */
  deletingAt?: Date;
}

export interface MaterialDoc extends RecordBase {
  category?: string;
  baseUnit: { code: string; name: string; precision: number };
  costing: { method: CostingMethod; initialCost: number };
  expiration: { expires: boolean; shelfLifeDays?: number; expirationPolicy: ExpirationPolicy };
  suppliers: Record<string, unknown>[];
  lotTrackingEnabled: boolean;
}

export interface SupplyDoc extends RecordBase {
  supplyCategory: (typeof SUPPLY_CATEGORIES)[number];
  consumptionUnit: string;
  /** Decimals of consumptionUnit kept in balances (ours; the spec names none). */
  unitPrecision: number;
  typicalUsagePerOrder?: number;
  shippingAssociation?: string;
  preferredSupplierId?: string;
}

/** A lot (or, for a material without lot tracking, a cost layer) at one location. */
export interface StockLot {
  lotNumber: string;
  /** In base-unit steps (see quantity.ts). */
  quantity: number;
  costPerUnit: number;
  currency: string;
  receivedDate: Date;
  expirationDate: Date | null;
}

/** An alert of one location: opened when available stock fell to the reorder point, closed when it recovered. */
export interface StockAlert {
  id: string;
  sku: string;
  kind: StockKind;
  locationId: string;
  status: 'open' | 'closed';
  openedAt: Date;
  closedAt: Date | null;
  /** Available stock (base units) when the alert opened, and when it closed. */
  availableAtOpen: number;
  availableAtClose: number | null;
  reorderPoint: number;
  minStock: number;
  reorderQuantity: number;
  unit: string;
}

export interface LocationStock {
  locationId: string;
  /** Base-unit steps on hand; for a material, the sum of its lots. */
  quantity: number;
  reservedQty: number;
  committedQty: number;
  /** Base units, as the client set them when the record was created. */
  minStock: number;
  reorderPoint: number;
  lots: StockLot[];
  createdAt: Date;
  updatedAt: Date;
}

/** One receipt's cost (in the material's currency, per base unit). */
export interface CostPoint {
  cost: number;
  date: Date;
  /** Base units received at that cost. */
  quantity: number;
}

/** A lot a movement took or added; consumptions keep its terms, so a return can put back even a lot since pruned. */
export interface MovedLot {
  lotNumber: string;
  quantity: number;
  costPerUnit: number;
  currency?: string;
  receivedDate?: Date;
  expirationDate?: Date | null;
}

/** One entry of the ledger: who moved how much of what, where, when and why. */
export interface StockMovement {
  _id: string; // `<tenantId>:<movementId>`
  tenantId: string;
  movementId: string;
  sku: string;
  kind: StockKind;
  /**
   * receipt and transfer as the routes ask; consumption takes stock for a bill of materials, a
   * modifier or an order (shared/consumption), and return puts a consumption's lots back (or, when
   * the consumption never applied, voids it so that it never can).
   */
  type: 'receipt' | 'transfer' | 'consumption' | 'return';
  locationId: string;
  toLocationId: string | null;
  /** Base-unit steps, and the base units they stand for. */
  quantityMinor: number;
  quantity: number;
  unit: string;
  /** The quantity and unit as the request sent them. */
  requested: { quantity: number; unit: string };
  lots: MovedLot[];
  /** What the stock taken was worth (consumptions and returns), in the record's currency. */
  cost?: { total: number; currency: string } | null;
  /** The consumption a consumption or return movement belongs to, and what it was for. */
  consumption?: { id: string; reference: { type: string; id: string } | null } | null;
  /** A return that found its consumption never applied: it voids it (nothing moved). */
  voided?: boolean;
  reason: string | null;
  actor: string;
  idempotencyKey: string | null;
  at: Date;
}

/**
 * Everything about the stock of one SKU, in one document, so that every change (a receipt, a
 * transfer between two locations, an alert opening) is one atomic, version-guarded write: a killed
 * process leaves either all of a change or none of it. `journal` holds the latest movements (the
 * head of the ledger); older ones are copied to `material_movements` before they leave it.
 */
export interface StockDoc {
  _id: string; // `<tenantId>:<SKU>`
  tenantId: string;
  sku: string;
  kind: StockKind;
  unit: string;
  precision: number;
  locations: LocationStock[];
  costing: { currentCost: number; calculatedAt: Date; lastPurchaseCost: number | null; history: CostPoint[] } | null;
  alerts: StockAlert[];
  hasAlerts: boolean;
  journal: JournalEntry[];
  /** The record was deleted: this is a tombstone (no stock), kept so its version guards racing writes. */
  retired?: boolean;
  /** A tombstone's deleted record, by when it was created: a receipt that read that record (racing its delete) is refused. */
  retiredRecord?: Date;
  /** Some journal entries have moved to the ledger: a retried movement not in the journal may be there. */
  flushed?: boolean;
  /** How many movements it has taken (absent on documents older than it): the sequence of its stock.changed events. */
  seq?: number;
  version: number;
  updatedAt: Date;
}

export const materials = defineCollection<MaterialDoc>({
  name: 'materials',
  scope: 'tenant',
  indexes: [
    { key: { tenantId: 1, sku: 1 }, options: { unique: true } },
    { key: { tenantId: 1, status: 1, sku: 1 } },
    { key: { tenantId: 1, category: 1, sku: 1 } },
  ],
});

export const supplies = defineCollection<SupplyDoc>({
  name: 'supplies',
  scope: 'tenant',
  indexes: [
    { key: { tenantId: 1, sku: 1 }, options: { unique: true } },
    { key: { tenantId: 1, status: 1, sku: 1 } },
    { key: { tenantId: 1, supplyCategory: 1, sku: 1 } },
  ],
});

export const materialStock = defineCollection<StockDoc>({
  name: 'material_stock',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, kind: 1, hasAlerts: 1 } }, { key: { tenantId: 1, 'locations.locationId': 1 } }],
});

export const materialMovements = defineCollection<StockMovement>({
  name: 'material_movements',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, sku: 1, at: -1 } }],
});

/** A movement as the stock document's journal holds it (the ledger adds its `_id` and tenant). */
export type JournalEntry = Omit<StockMovement, '_id' | 'tenantId'>;

export function recordId(tenantId: string, sku: string): string {
  return `${tenantId}:${sku.toUpperCase()}`;
}
