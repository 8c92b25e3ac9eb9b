import { defineCollection } from '../db/collection';
import type { MovedLot, StockKind } from '../materials/collections';

/** One material or supply a consumption takes, in base-unit steps, and why. */
export interface PlannedLine {
  sku: string;
  kind: StockKind;
  minor: number;
  unit: string;
  precision: number;
  source: 'component' | 'substitute' | 'modifier';
  /** The BOM component a line stands for (a substitute's primary). */
  componentSku?: string;
}

export interface ConsumptionPlan {
  locationId: string;
  /** The order lots leave in; default each material's costing method. */
  method?: 'fifo' | 'lifo';
  lines: PlannedLine[];
}

/** What one SKU's movement of a consumption took. */
export interface ConsumedSku {
  sku: string;
  kind: StockKind;
  movementId: string;
  quantity: number;
  unit: string;
  lots: MovedLot[];
  cost: { total: number; currency: string } | null;
}

export interface Shortfall {
  materialSku: string;
  required: number;
  available: number;
  unit: string;
  error: string;
}

/**
 * pending → applied → returning → returned; pending → failing → failed. A decision (applied or
 * failing) is one guarded update from pending of the same attempt, so of any number of processes
 * driving one consumption exactly one decides; failing and returning mean stock is being put back,
 * and whoever finds them finishes that first.
 */
export type ConsumptionStatus = 'pending' | 'applied' | 'failing' | 'failed' | 'returning' | 'returned';

/** States of a consumption that took its stock (and may since be putting it back): a retry replays it. */
export const TAKEN: ReadonlySet<ConsumptionStatus> = new Set(['applied', 'returning', 'returned']);

/**
 * One consumption of materials and supplies at a location, exactly once per `consumptionId` (a
 * BOM run's product and reference, a consumption's referenceId, an order). Its movements carry ids
 * derived from the id, the attempt and the SKU, so every step can be run again without effect.
 */
export interface ConsumptionDoc {
  _id: string; // `<tenantId>:<consumptionId>`
  tenantId: string;
  consumptionId: string;
  reference: { type: string; id: string } | null;
  status: ConsumptionStatus;
  /** Raised when a failed consumption is asked for again (its movements were put back or voided). */
  attempt: number;
  plan: ConsumptionPlan;
  consumed: ConsumedSku[] | null;
  shortfalls: Shortfall[] | null;
  /**
   * SKUs of the plan whose record was deleted before their stock could be put back (returned or
   * failed): nothing of theirs went back. Absent when everything went back.
   */
  notReturned?: string[];
  /** What the caller wants back with a replay (the BOM run's answer fields). */
  meta: Record<string, unknown>;
  actor: string;
  createdAt: Date;
  updatedAt: Date;
}

export const materialConsumptions = defineCollection<ConsumptionDoc>({
  name: 'material_consumptions',
  scope: 'tenant',
  indexes: [{ key: { tenantId: 1, status: 1, updatedAt: 1 } }],
});
