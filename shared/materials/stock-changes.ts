import { AppError } from '../errors/catalog';
import type {
  CostingMethod,
  ExpirationPolicy,
  LocationStock,
  StockAlerts,
  StockDoc,
  StockKind,
  StockLot,
  JournalEntry,
} from './collections';
import {
  averageMicros,
  costMicros,
  fromMicros,
  fromMinor,
  MAX_MINOR,
  roundCost,
  valueOf,
  valueOfLayers,
} from './quantity';

/**
 * The rules of a stock document, as pure functions from the document read to the document to
 * write: receiving into a lot, taking lots in the order the costing method and the expiration
 * policy say, the current cost, valuation and alerts. The store (stock.ts) writes the result with
 * one version-guarded update, so every rule here sees a consistent document.
 */

/** What the rules need to know about the material or supply a document belongs to. */
export interface StockFacts {
  kind: StockKind;
  sku: string;
  unit: string;
  precision: number;
  currency: string;
  stockAlerts: StockAlerts;
  /** Materials only. */
  lotTracking: boolean;
  costing: { method: CostingMethod; initialCost: number } | null;
  expiration: { expires: boolean; shelfLifeDays?: number; expirationPolicy: ExpirationPolicy } | null;
  /** The record's price: what a unit of a supply (which has no costing) is worth when it is consumed. */
  price?: number | null;
}

/*
 * What a stock document keeps is bounded, because every change rewrites the whole document and,
 * on FerretDB, a write costs about what the document weighs (17 ms at 28 KB, 2 ms at 1 KB).
 */
/** Depleted lots a location keeps listed (older ones are in the ledger). */
const DEPLETED_KEPT = 3;
/** Closed alerts a document keeps (open ones are always kept). */
const CLOSED_ALERTS_KEPT = 5;
/** Cost history entries a document keeps (every receipt's cost is also in the ledger). */
const COST_HISTORY_KEPT = 10;

export function emptyStock(facts: StockFacts, _id: string, now: Date): StockDoc {
  return {
    _id,
    tenantId: '',
    sku: facts.sku,
    kind: facts.kind,
    unit: facts.unit,
    precision: facts.precision,
    locations: [],
    costing: null,
    alerts: [],
    hasAlerts: false,
    journal: [],
    version: 0,
    updatedAt: now,
  };
}

export function isExpired(lot: StockLot, now: Date): boolean {
  return lot.expirationDate !== null && lot.expirationDate.getTime() <= now.getTime();
}

export function lotStatus(lot: StockLot, now: Date): 'available' | 'expired' | 'depleted' {
  if (lot.quantity <= 0) return 'depleted';
  return isExpired(lot, now) ? 'expired' : 'available';
}

/** Steps at a location that may leave it: on hand, less reserved, committed and expired. */
export function availableMinor(loc: LocationStock, now: Date): number {
  const expired = loc.lots.filter((l) => l.quantity > 0 && isExpired(l, now)).reduce((s, l) => s + l.quantity, 0);
  return Math.max(0, loc.quantity - loc.reservedQty - loc.committedQty - expired);
}

const byReceived = (a: StockLot, b: StockLot) =>
  a.receivedDate.getTime() - b.receivedDate.getTime() || a.lotNumber.localeCompare(b.lotNumber);

/**
 * The lots of a location in the order they leave it: none expired or empty; with FEFO (an
 * expiring material's default policy) the earliest expiry first; otherwise, and among lots
 * expiring together, the costing method's order: newest first for LIFO, oldest first for the rest.
 */
export function takingOrder(lots: StockLot[], facts: StockFacts, now: Date): StockLot[] {
  const live = lots.filter((l) => l.quantity > 0 && !isExpired(l, now));
  const lifo = facts.costing?.method === 'lifo';
  const costingOrder = (a: StockLot, b: StockLot) => (lifo ? byReceived(b, a) : byReceived(a, b));
  const fefo = facts.expiration?.expires && facts.expiration.expirationPolicy === 'fefo';
  if (!fefo) return live.sort(costingOrder);
  const expiry = (l: StockLot) => l.expirationDate?.getTime() ?? Number.POSITIVE_INFINITY;
  return live.sort((a, b) => expiry(a) - expiry(b) || costingOrder(a, b));
}

function sameDate(a: Date | null, b: Date | null): boolean {
  return (a?.getTime() ?? null) === (b?.getTime() ?? null);
}

function sameLotTerms(a: StockLot, b: Pick<StockLot, 'costPerUnit' | 'currency' | 'expirationDate'>): boolean {
  return (
    costMicros(a.costPerUnit) === costMicros(b.costPerUnit) &&
    a.currency === b.currency &&
    sameDate(a.expirationDate, b.expirationDate)
  );
}

function pruneDepleted(lots: StockLot[]): StockLot[] {
  const depleted = lots.filter((l) => l.quantity <= 0);
  if (depleted.length <= DEPLETED_KEPT) return lots;
  const drop = new Set(depleted.sort(byReceived).slice(0, depleted.length - DEPLETED_KEPT));
  return lots.filter((l) => !drop.has(l));
}

function locationOf(doc: StockDoc, locationId: string): LocationStock | undefined {
  return doc.locations.find((l) => l.locationId === locationId);
}

function newLocation(
  locationId: string,
  facts: StockFacts,
  now: Date,
  limits: { minStock?: number; reorderPoint?: number } = {},
): LocationStock {
  return {
    locationId,
    quantity: 0,
    reservedQty: 0,
    committedQty: 0,
    minStock: limits.minStock ?? facts.stockAlerts.minStock,
    reorderPoint: limits.reorderPoint ?? facts.stockAlerts.reorderPoint,
    lots: [],
    createdAt: now,
    updatedAt: now,
  };
}

function tooLarge(sku: string): AppError {
  return new AppError(400, 'bad-request', `The balance of ${sku} would exceed what can be stored exactly`, {
    parameter: 'quantity',
  });
}

export interface ReceiptInput {
  locationId: string;
  minor: number;
  lot?: { lotNumber?: string; costPerUnit?: number; currency?: string; expirationDate?: Date };
  minStock?: number;
  reorderPoint?: number;
}

/** The lot a receipt goes into: the client's, or for a material without lot tracking a cost layer of ours. */
function receivedLot(
  doc: StockDoc,
  loc: LocationStock,
  input: ReceiptInput,
  facts: StockFacts,
  movementId: string,
  now: Date,
) {
  const lot = input.lot ?? {};
  const currency = (lot.currency ?? facts.currency).toUpperCase();
  if (currency !== facts.currency)
    throw new AppError(
      400,
      'validation-error',
      `lot.currency ${currency} is not the currency of ${facts.sku} (${facts.currency}): costs of one material are kept in one currency`,
      { field: 'lot.currency' },
    );
  if (facts.lotTracking && !lot.lotNumber)
    throw new AppError(400, 'validation-error', `${facts.sku} is lot-tracked: a receipt needs lot.lotNumber`, {
      field: 'lot.lotNumber',
    });
  // more of a lot already known takes the terms it has, unless the receipt sends its own
  const known = lot.lotNumber
    ? doc.locations.flatMap((l) => l.lots).find((l) => l.lotNumber === lot.lotNumber)
    : undefined;
  const shelfLife = facts.expiration?.expires ? facts.expiration.shelfLifeDays : undefined;
  const terms = {
    costPerUnit: roundCost(
      lot.costPerUnit ?? known?.costPerUnit ?? doc.costing?.currentCost ?? facts.costing?.initialCost ?? 0,
    ),
    currency,
    expirationDate:
      lot.expirationDate ??
      (known
        ? known.expirationDate
        : shelfLife !== undefined
          ? new Date(now.getTime() + shelfLife * 86_400_000)
          : null),
  };
  if (lot.lotNumber) {
    const clash = doc.locations
      .flatMap((l) => l.lots)
      .find((l) => l.lotNumber === lot.lotNumber && !sameLotTerms(l, terms));
    if (clash)
      throw new AppError(
        400,
        'validation-error',
        `Lot ${lot.lotNumber} of ${facts.sku} exists with another cost or expiry (costPerUnit ${clash.costPerUnit} ${clash.currency}, expirationDate ${clash.expirationDate?.toISOString() ?? 'none'}): receive into a new lot number`,
        { field: 'lot.lotNumber', details: { lotNumber: lot.lotNumber } },
      );
    const here = loc.lots.find((l) => l.lotNumber === lot.lotNumber);
    return { existing: here, lotNumber: lot.lotNumber, terms };
  }
  // no lot tracking and no lot named: into the newest lot of the location when it is a layer of
  // ours with the same terms, else a new layer (merged into an older layer, the units would leave
  // before a lot received after it under FIFO, and stand behind it under LIFO)
  const newest = [...loc.lots]
    .filter((l) => l.quantity > 0)
    .sort(byReceived)
    .pop();
  if (newest && newest.lotNumber.startsWith('RCV-') && sameLotTerms(newest, terms))
    return { existing: newest, lotNumber: newest.lotNumber, terms };
  return { existing: undefined, lotNumber: `RCV-${movementId.slice(-12)}`, terms };
}

/** The document after a receipt, and the lots it went into. */
export function applyReceipt(
  doc: StockDoc,
  facts: StockFacts,
  input: ReceiptInput,
  movement: Omit<JournalEntry, 'lots'>,
  now: Date,
): StockDoc {
  const next = structuredClone(doc);
  let loc = locationOf(next, input.locationId);
  if (!loc) {
    loc = newLocation(input.locationId, facts, now, input);
    next.locations.push(loc);
  }
  if (loc.quantity + input.minor > MAX_MINOR) throw tooLarge(facts.sku);
  loc.quantity += input.minor;
  loc.updatedAt = now;
  let lots: JournalEntry['lots'] = [];
  if (facts.kind === 'material') {
    const target = receivedLot(next, loc, input, facts, movement.movementId, now);
    if (target.existing) target.existing.quantity += input.minor;
    else loc.lots.push({ lotNumber: target.lotNumber, quantity: input.minor, receivedDate: now, ...target.terms });
    loc.lots = pruneDepleted(loc.lots);
    lots = [
      {
        lotNumber: target.lotNumber,
        quantity: fromMinor(input.minor, facts.precision),
        costPerUnit: target.terms.costPerUnit,
      },
    ];
    next.costing = costingAfterReceipt(
      next,
      facts,
      target.terms.costPerUnit,
      fromMinor(input.minor, facts.precision),
      now,
    );
  }
  next.journal.push({ ...movement, lots });
  evaluateAlerts(next, facts, movement.movementId, now);
  next.updatedAt = now;
  return next;
}

export function transferFailed(message: string, details: Record<string, unknown>): AppError {
  return new AppError(400, 'transfer-failed', message, { details });
}

/** The document after moving `minor` steps between two of its locations: all of it, or a transfer-failed refusal. */
export function applyTransfer(
  doc: StockDoc,
  facts: StockFacts,
  input: { fromLocationId: string; toLocationId: string; minor: number },
  movement: Omit<JournalEntry, 'lots'>,
  now: Date,
): StockDoc {
  const next = structuredClone(doc);
  const from = locationOf(next, input.fromLocationId);
  const available = from ? availableMinor(from, now) : 0;
  if (!from || available < input.minor) {
    const have = fromMinor(available, facts.precision);
    const want = fromMinor(input.minor, facts.precision);
    throw transferFailed(
      `Not enough ${facts.sku} at ${input.fromLocationId}: ${have} ${facts.unit} available, ${want} ${facts.unit} requested (short by ${fromMinor(input.minor - available, facts.precision)} ${facts.unit})`,
      {
        sku: facts.sku,
        fromLocationId: input.fromLocationId,
        available: have,
        requested: want,
        shortBy: fromMinor(input.minor - available, facts.precision),
        unit: facts.unit,
      },
    );
  }
  let to = locationOf(next, input.toLocationId);
  if (!to) {
    to = newLocation(input.toLocationId, facts, now);
    next.locations.push(to);
  }
  if (to.quantity + input.minor > MAX_MINOR) throw tooLarge(facts.sku);
  from.quantity -= input.minor;
  to.quantity += input.minor;
  from.updatedAt = to.updatedAt = now;
  const lots: JournalEntry['lots'] = [];
  if (facts.kind === 'material') {
    let left = input.minor;
    for (const lot of takingOrder(from.lots, facts, now)) {
      if (left <= 0) break;
      const take = Math.min(lot.quantity, left);
      lot.quantity -= take;
      left -= take;
      // a lot of the same number there joins it only on the same terms: a number received again
      // after its lot left the document may stand for another cost or expiry at the destination
      const there = to.lots.find((l) => l.lotNumber === lot.lotNumber && sameLotTerms(l, lot));
      if (there) there.quantity += take;
      else to.lots.push({ ...lot, quantity: take });
      lots.push({ lotNumber: lot.lotNumber, quantity: fromMinor(take, facts.precision), costPerUnit: lot.costPerUnit });
    }
    from.lots = pruneDepleted(from.lots);
  }
  next.journal.push({ ...movement, lots });
  evaluateAlerts(next, facts, movement.movementId, now);
  next.updatedAt = now;
  return next;
}

/** A consumption refused for want of stock: the engine gathers these into one answer naming every shortfall. */
export function insufficientStock(
  facts: StockFacts,
  locationId: string,
  required: number,
  available: number,
): AppError {
  const unit = facts.unit;
  const need = fromMinor(required, facts.precision);
  const have = fromMinor(available, facts.precision);
  return new AppError(
    400,
    'insufficient-stock',
    `Not enough ${facts.sku} at ${locationId}: ${have} ${unit} available, ${need} ${unit} required`,
    { details: { materialSku: facts.sku, locationId, required: need, available: have, unit } },
  );
}

/** A consumption whose return (a void) was recorded before it could apply: it never applies. */
export function consumptionVoided(facts: StockFacts, consumptionId: string): AppError {
  return new AppError(
    409,
    'conflict',
    `The consumption ${consumptionId} of ${facts.sku} was called off before it applied`,
    { details: { materialSku: facts.sku, consumptionId, reason: 'voided' } },
  );
}

export interface ConsumptionInput {
  locationId: string;
  minor: number;
  /** The order lots leave in (fifo or lifo); default the material's costing method. */
  method?: 'fifo' | 'lifo';
}

/**
 * The document after taking `minor` steps at a location for a consumption: lots leave in the order
 * of `method` (or the costing method; FEFO first for an expiring material, never expired lots);
 * what they were worth is recorded on the movement (a lot's own cost for fifo/lifo-costed
 * materials and for a chosen method, the average or last purchase cost otherwise, a supply's price).
 * Refused with insufficient-stock when the location has less available.
 */
export function applyConsumption(
  doc: StockDoc,
  facts: StockFacts,
  input: ConsumptionInput,
  movement: Omit<JournalEntry, 'lots'>,
  now: Date,
): StockDoc {
  const next = structuredClone(doc);
  const loc = locationOf(next, input.locationId);
  const available = loc ? availableMinor(loc, now) : 0;
  if (!loc || available < input.minor) throw insufficientStock(facts, input.locationId, input.minor, available);
  loc.quantity -= input.minor;
  loc.updatedAt = now;
  const lots: JournalEntry['lots'] = [];
  let cost: number;
  if (facts.kind === 'material') {
    const method = input.method ?? facts.costing?.method ?? 'average';
    const order = facts.costing ? { ...facts, costing: { ...facts.costing, method } } : facts;
    const layers: { minor: number; micros: bigint }[] = [];
    let left = input.minor;
    for (const lot of takingOrder(loc.lots, order, now)) {
      if (left <= 0) break;
      const take = Math.min(lot.quantity, left);
      lot.quantity -= take;
      left -= take;
      layers.push({ minor: take, micros: costMicros(lot.costPerUnit) });
      lots.push({
        lotNumber: lot.lotNumber,
        quantity: fromMinor(take, facts.precision),
        costPerUnit: lot.costPerUnit,
        currency: lot.currency,
        receivedDate: lot.receivedDate,
        expirationDate: lot.expirationDate,
      });
    }
    const current = doc.costing?.currentCost ?? facts.costing?.initialCost ?? 0;
    if (method === 'fifo' || method === 'lifo') cost = valueOfLayers(layers, facts.precision);
    else if (method === 'last_purchase')
      cost = valueOf(input.minor, facts.precision, costMicros(doc.costing?.lastPurchaseCost ?? current));
    else cost = valueOf(input.minor, facts.precision, costMicros(currentCostOf(doc, facts, now)));
    loc.lots = pruneDepleted(loc.lots);
    next.costing = {
      currentCost: currentCostOf(next, facts, now),
      calculatedAt: now,
      lastPurchaseCost: doc.costing?.lastPurchaseCost ?? null,
      history: doc.costing?.history ?? [],
    };
  } else {
    cost = valueOf(input.minor, facts.precision, costMicros(facts.price ?? 0));
  }
  next.journal.push({ ...movement, lots, cost: { total: cost, currency: facts.currency } });
  evaluateAlerts(next, facts, movement.movementId, now);
  next.updatedAt = now;
  return next;
}

/**
 * The document after putting back what `consumed` took (its lots, with their terms, at its
 * location), or, when `consumed` is undefined (the consumption never applied), after recording
 * the return as a void that keeps the consumption from ever applying. Either is one write.
 */
export function applyReturn(
  doc: StockDoc,
  facts: StockFacts,
  consumed: JournalEntry | undefined,
  movement: Omit<JournalEntry, 'lots'>,
  now: Date,
): StockDoc {
  const next = structuredClone(doc);
  if (!consumed) {
    next.journal.push({ ...movement, quantity: 0, quantityMinor: 0, lots: [], cost: null, voided: true });
    next.updatedAt = now;
    return next;
  }
  let loc = locationOf(next, consumed.locationId);
  if (!loc) {
    loc = newLocation(consumed.locationId, facts, now);
    next.locations.push(loc);
  }
  if (loc.quantity + consumed.quantityMinor > MAX_MINOR) throw tooLarge(facts.sku);
  loc.quantity += consumed.quantityMinor;
  loc.updatedAt = now;
  if (facts.kind === 'material') {
    for (const l of consumed.lots) {
      const minor = Math.round(l.quantity * 10 ** facts.precision);
      const back = {
        lotNumber: l.lotNumber,
        quantity: minor,
        costPerUnit: l.costPerUnit,
        currency: l.currency ?? facts.currency,
        receivedDate: l.receivedDate ? new Date(l.receivedDate) : now,
        expirationDate: l.expirationDate ? new Date(l.expirationDate) : null,
      };
      // back into its lot only where that lot still has its terms: the number may have been
      // received again since (its old lot pruned) at another cost or expiry, and merged the
      // returned units would take that lot's cost; otherwise it is restored as a lot of its own
      const there = loc.lots.find((x) => x.lotNumber === l.lotNumber && sameLotTerms(x, back));
      if (there) there.quantity += minor;
      else loc.lots.push(back);
    }
    next.costing = {
      currentCost: currentCostOf(next, facts, now),
      calculatedAt: now,
      lastPurchaseCost: doc.costing?.lastPurchaseCost ?? null,
      history: doc.costing?.history ?? [],
    };
  }
  next.journal.push({
    ...movement,
    locationId: consumed.locationId,
    quantityMinor: consumed.quantityMinor,
    quantity: consumed.quantity,
    lots: consumed.lots,
    cost: consumed.cost ?? null,
  });
  evaluateAlerts(next, facts, movement.movementId, now);
  next.updatedAt = now;
  return next;
}

/** Lots still in stock across every location (not expired, not empty). */
function liveLots(doc: StockDoc, now: Date): StockLot[] {
  return doc.locations.flatMap((l) => l.lots).filter((l) => l.quantity > 0 && !isExpired(l, now));
}

/**
 * The cost per base unit of the next unit to leave, by costing method: FIFO the oldest live lot's,
 * LIFO the newest's, average the weighted average of every live lot, last_purchase the latest
 * receipt's. With nothing in stock it stays what it was (at first, the initial cost).
 */
export function currentCostOf(doc: StockDoc, facts: StockFacts, now: Date): number {
  const fallback = doc.costing?.currentCost ?? facts.costing?.initialCost ?? 0;
  const method = facts.costing?.method ?? 'average';
  if (method === 'last_purchase') return doc.costing?.lastPurchaseCost ?? fallback;
  const live = liveLots(doc, now).sort(byReceived);
  if (!live.length) return fallback;
  if (method === 'fifo') return live[0].costPerUnit;
  if (method === 'lifo') return live[live.length - 1].costPerUnit;
  const avg = averageMicros(live.map((l) => ({ minor: l.quantity, micros: costMicros(l.costPerUnit) })));
  return avg === null ? fallback : fromMicros(avg);
}

function costingAfterReceipt(
  doc: StockDoc,
  facts: StockFacts,
  cost: number,
  quantity: number,
  now: Date,
): NonNullable<StockDoc['costing']> {
  const history = [...(doc.costing?.history ?? []), { cost, date: now, quantity }].slice(-COST_HISTORY_KEPT);
  const costing = { currentCost: doc.costing?.currentCost ?? cost, calculatedAt: now, lastPurchaseCost: cost, history };
  return { ...costing, currentCost: currentCostOf({ ...doc, costing }, facts, now) };
}

/** The document with its current cost recomputed (after a change of costing method). */
export function recost(doc: StockDoc, facts: StockFacts, now: Date): StockDoc {
  if (facts.kind !== 'material') return doc;
  const next = structuredClone(doc);
  next.costing = {
    currentCost: currentCostOf(doc, facts, now),
    calculatedAt: now,
    lastPurchaseCost: doc.costing?.lastPurchaseCost ?? null,
    history: doc.costing?.history ?? [],
  };
  return next;
}

/** What the stock of one location is worth under the costing method, to the cent. */
export function valuationOf(doc: StockDoc, loc: LocationStock, facts: StockFacts, now: Date) {
  const method = facts.costing?.method ?? 'average';
  const current = doc.costing?.currentCost ?? facts.costing?.initialCost ?? 0;
  let totalValue: number;
  if (method === 'fifo' || method === 'lifo') {
    // the lots' values summed exactly, rounded once (as a consumption of them is costed)
    totalValue = valueOfLayers(
      loc.lots.map((l) => ({ minor: l.quantity, micros: costMicros(l.costPerUnit) })),
      facts.precision,
    );
  } else {
    const unitCost =
      method === 'last_purchase' ? (doc.costing?.lastPurchaseCost ?? current) : currentCostOf(doc, facts, now);
    totalValue = valueOf(loc.quantity, facts.precision, costMicros(unitCost));
  }
  const quantity = fromMinor(loc.quantity, facts.precision);
  return {
    method,
    totalValue,
    unitCost: quantity > 0 ? roundCost(totalValue / quantity) : roundCost(current),
    currency: facts.currency,
  };
}

/**
 * Opens an alert for each location whose available stock is at or below its reorder point and
 * has none open; closes the open one of a location that recovered. Once per crossing, never once
 * per movement, because the open alert is part of the document this change is written to. Every
 * location of the SKU is looked at, not only those the movement touched: a lot that expired
 * elsewhere is noticed at the SKU's next movement.
 */
export function evaluateAlerts(
  doc: StockDoc,
  facts: StockFacts,
  /** The movement that made the change: an alert it opens is named after it (unique, and the same on a replay). */
  movementId: string,
  now: Date,
): void {
  for (const loc of doc.locations) {
    const { locationId } = loc;
    const available = fromMinor(availableMinor(loc, now), facts.precision);
    const open = doc.alerts.find((a) => a.locationId === locationId && a.status === 'open');
    const low = facts.stockAlerts.alertEnabled && available <= loc.reorderPoint;
    if (low && !open) {
      doc.alerts.push({
        id: `alr_${movementId.replace(/^mmv_/, '')}_${locationId}`,
        sku: facts.sku,
        kind: facts.kind,
        locationId,
        status: 'open',
        openedAt: now,
        closedAt: null,
        availableAtOpen: available,
        availableAtClose: null,
        reorderPoint: loc.reorderPoint,
        minStock: loc.minStock,
        reorderQuantity: facts.stockAlerts.reorderQuantity,
        unit: facts.unit,
      });
    } else if (open && !low) {
      open.status = 'closed';
      open.closedAt = now;
      open.availableAtClose = available;
    }
  }
  const closed = doc.alerts.filter((a) => a.status === 'closed');
  if (closed.length > CLOSED_ALERTS_KEPT) {
    const drop = new Set(closed.slice(0, closed.length - CLOSED_ALERTS_KEPT));
    doc.alerts = doc.alerts.filter((a) => !drop.has(a));
  }
  doc.hasAlerts = doc.alerts.length > 0;
}
