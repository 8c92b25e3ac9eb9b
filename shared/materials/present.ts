import type { JournalEntry, LocationStock, StockAlert, StockDoc } from './collections';
import { fromMinor } from './quantity';
import { costNow, factsOf, isMaterial, type StockRecord } from './records';
import { availableMinor, lotStatus, valuationOf, type StockFacts } from './stock-changes';

/**
 * Records as the REST surface answers them: flat (fields at the top level), quantities in base
 * units as decimals of the unit's precision, dates as ISO text.
 */

/** The spec's paged list: page is 0-based. */
export function pageOf<T>(data: T[], total: number, q: { page: number; limit: number }) {
  const totalPages = Math.ceil(total / q.limit);
  return { data, total, page: q.page, limit: q.limit, totalPages, hasMore: (q.page + 1) * q.limit < total };
}

export function presentRecord(doc: StockRecord, stock: StockDoc | null) {
  const common = {
    sku: doc.sku,
    title: doc.title,
    ...(doc.description !== undefined ? { description: doc.description } : {}),
  };
  const tail = {
    alternativeUnits: doc.alternativeUnits,
    price: doc.price ?? null,
    currency: doc.currency,
    stockAlerts: doc.stockAlerts,
    tags: doc.tags,
    status: doc.status,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
  if (!isMaterial(doc))
    return {
      ...common,
      supplyCategory: doc.supplyCategory,
      consumptionUnit: doc.consumptionUnit,
      unitPrecision: doc.unitPrecision,
      ...(doc.typicalUsagePerOrder !== undefined ? { typicalUsagePerOrder: doc.typicalUsagePerOrder } : {}),
      ...(doc.shippingAssociation !== undefined ? { shippingAssociation: doc.shippingAssociation } : {}),
      ...(doc.preferredSupplierId !== undefined ? { preferredSupplierId: doc.preferredSupplierId } : {}),
      ...tail,
    };
  const history = stock?.costing?.history ?? [];
  return {
    ...common,
    ...(doc.category !== undefined ? { category: doc.category } : {}),
    baseUnit: doc.baseUnit,
    costing: {
      method: doc.costing.method,
      currentCost: {
        value: costNow(doc, stock),
        currency: doc.currency,
        perUnit: doc.baseUnit.code,
        calculatedAt: stock?.costing?.calculatedAt ?? doc.createdAt,
      },
      costHistory: [
        { cost: doc.costing.initialCost, currency: doc.currency, date: doc.createdAt, quantity: 0 },
        ...history.map((h) => ({ cost: h.cost, currency: doc.currency, date: h.date, quantity: h.quantity })),
      ],
    },
    expiration: doc.expiration,
    suppliers: doc.suppliers,
    lotTrackingEnabled: doc.lotTrackingEnabled,
    ...tail,
  };
}

function openAlertOf(doc: StockDoc, locationId: string) {
  const open = doc.alerts.find((a) => a.locationId === locationId && a.status === 'open');
  return open ? presentAlert(open) : null;
}

/** The spec's material-inventory record of one location (a supply's has no lots and no valuation). */
export function presentLocation(doc: StockDoc, loc: LocationStock, record: StockRecord, now = new Date()) {
  const facts: StockFacts = factsOf(record);
  const q = (minor: number) => fromMinor(minor, doc.precision);
  const base = {
    tenantId: doc.tenantId,
    [facts.kind === 'material' ? 'materialSku' : 'supplySku']: doc.sku,
    locationId: loc.locationId,
    quantity: q(loc.quantity),
    unit: doc.unit,
    reservedQty: q(loc.reservedQty),
    committedQty: q(loc.committedQty),
    available: q(availableMinor(loc, now)),
  };
  const tail = {
    minStock: loc.minStock,
    reorderPoint: loc.reorderPoint,
    alert: openAlertOf(doc, loc.locationId),
    createdAt: loc.createdAt,
    updatedAt: loc.updatedAt,
  };
  if (facts.kind === 'supply') return { ...base, ...tail };
  return {
    ...base,
    lotTrackingEnabled: facts.lotTracking,
    lots: loc.lots.map((l) => ({
      lotNumber: l.lotNumber,
      quantity: q(l.quantity),
      costPerUnit: l.costPerUnit,
      currency: l.currency,
      receivedDate: l.receivedDate,
      expirationDate: l.expirationDate,
      status: lotStatus(l, now),
    })),
    valuation: valuationOf(doc, loc, facts, now),
    ...tail,
  };
}

/** The total across locations. */
export function presentTotal(doc: StockDoc | null, record: StockRecord, now = new Date()) {
  const facts = factsOf(record);
  const precision = doc?.precision ?? facts.precision;
  const q = (minor: number) => fromMinor(minor, precision);
  const locations = doc?.locations ?? [];
  const sum = (f: (l: LocationStock) => number) => q(locations.reduce((s, l) => s + f(l), 0));
  const total = {
    sku: record.sku,
    unit: doc?.unit ?? facts.unit,
    totalQuantity: sum((l) => l.quantity),
    totalReserved: sum((l) => l.reservedQty),
    totalCommitted: sum((l) => l.committedQty),
    totalAvailable: sum((l) => availableMinor(l, now)),
    byLocation: locations.map((l) => ({
      locationId: l.locationId,
      quantity: q(l.quantity),
      available: q(availableMinor(l, now)),
    })),
  };
  if (facts.kind === 'supply') return total;
  if (!doc) return { ...total, totalValue: 0, currency: facts.currency };
  const values = locations.map((l) => valuationOf(doc, l, facts, now).totalValue);
  return { ...total, totalValue: Math.round(values.reduce((s, v) => s + v, 0) * 100) / 100, currency: facts.currency };
}

export function presentAlert(a: StockAlert) {
  return {
    id: a.id,
    sku: a.sku,
    kind: a.kind,
    locationId: a.locationId,
    status: a.status,
    openedAt: a.openedAt,
    closedAt: a.closedAt,
    availableAtOpen: a.availableAtOpen,
    availableAtClose: a.availableAtClose,
    reorderPoint: a.reorderPoint,
    minStock: a.minStock,
    reorderQuantity: a.reorderQuantity,
    unit: a.unit,
  };
}

export function presentMovement(m: JournalEntry) {
  return {
    movementId: m.movementId,
    sku: m.sku,
    type: m.type,
    locationId: m.locationId,
    toLocationId: m.toLocationId,
    quantity: m.quantity,
    unit: m.unit,
    requested: m.requested,
    lots: m.lots.map((l) => ({ lotNumber: l.lotNumber, quantity: l.quantity, costPerUnit: l.costPerUnit })),
    ...(m.cost ? { cost: m.cost } : {}),
    ...(m.consumption ? { consumptionId: m.consumption.id, reference: m.consumption.reference } : {}),
    ...(m.voided ? { voided: true } : {}),
    reason: m.reason,
    actor: m.actor,
    at: m.at,
  };
}
