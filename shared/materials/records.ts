import type { TenantDb } from '../db/tenant-db';
import { isDuplicateKeyError } from '../db/duplicate-key';
import { AppError } from '../errors/catalog';
import { pageWindow0 } from '../paging';
import { Catalog } from '../products/catalog';
import { products } from '../products/collections';
import {
  materialStock,
  KIND_LABEL,
  materials,
  recordId,
  supplies,
  type MaterialDoc,
  type StockDoc,
  type StockKind,
  type SupplyDoc,
} from './collections';
import { unitCodes, type UnitSystem } from './quantity';
import { currentCostOf, type StockFacts } from './stock-changes';

import { isMaterial, NAMED_HOLD_MS, unitsOf, type StockRecord } from './lookup';
export { isMaterial, kindOf, stockRecordsBySku, unitsOf, type StockRecord } from './lookup';

const PATHS: Record<StockKind, string> = { material: '/products/materials', supply: '/products/supplies' };
/** SKUs whose record path is a route of its own (`GET /products/materials/alerts`). */
const RESERVED_SKUS = ['ALERTS'];

/** The material or supply a SKU names does not exist (never did, or was deleted). */
export class RecordNotFound extends AppError {
  constructor(
    readonly kind: StockKind,
    readonly sku: string,
  ) {
    super(404, 'not-found', `${KIND_LABEL[kind]} ${sku} not found`, { field: 'sku' });
  }
}

export function recordNotFound(kind: StockKind, sku: string): AppError {
  return new RecordNotFound(kind, sku);
}

function invalid(field: string, message: string, details?: Record<string, unknown>): AppError {
  return new AppError(400, 'validation-error', message, {
    field,
    fieldErrors: [{ field, message }],
    ...(details ? { details } : {}),
  });
}

/** What the stock rules need to know about a record. */
/**
 * A material's cost per base unit as it stands now: its costing method over the lots live at this
 * moment (one expired since the last movement no longer counts, as a consumption would not take
 * it), or its initial cost before any receipt. What the stock document stores is the cost at its
 * last movement.
 */
export function costNow(record: StockRecord, stock: StockDoc | null, now = new Date()): number {
  if (!isMaterial(record)) return record.price ?? 0;
  if (!stock?.costing) return record.costing.initialCost;
  // a stock read without its locations (a projection) has only the cost of its last movement
  return stock.locations ? currentCostOf(stock, factsOf(record), now) : stock.costing.currentCost;
}

export function factsOf(doc: StockRecord): StockFacts {
  const units = unitsOf(doc);
  return {
    kind: isMaterial(doc) ? 'material' : 'supply',
    sku: doc.sku,
    unit: units.base.code,
    precision: units.base.precision,
    currency: doc.currency,
    stockAlerts: doc.stockAlerts,
    lotTracking: isMaterial(doc) && doc.lotTrackingEnabled,
    costing: isMaterial(doc) ? doc.costing : null,
    expiration: isMaterial(doc) ? doc.expiration : null,
    price: doc.price ?? null,
  };
}

/** Alternative units must not repeat a code (in any case) nor the base unit's. */
function unitErrors(units: UnitSystem): AppError | null {
  const seen = new Set([units.base.code.toLowerCase()]);
  for (const [i, u] of units.alternatives.entries()) {
    const code = u.code.toLowerCase();
    if (seen.has(code))
      return invalid(
        `alternativeUnits.${i}.code`,
        `unit ${u.code} is named twice (codes are compared in any case, and include the base unit)`,
      );
    seen.add(code);
  }
  return null;
}

type Body = Record<string, unknown>;

const titleOf = (t: unknown) =>
  typeof t === 'string' ? { value: t.trim() } : { value: (t as { value: string }).value.trim() };

/** The stored fields of a create body (defaults filled by the schema). */
function newRecord(
  kind: StockKind,
  body: Body,
  sku: string,
  now: Date,
): Omit<MaterialDoc, 'tenantId' | '_id'> | Omit<SupplyDoc, 'tenantId' | '_id'> {
  const common = {
    sku,
    title: titleOf(body.title),
    ...(body.description !== undefined ? { description: body.description as string } : {}),
    ...(body.price !== undefined && body.price !== null ? { price: body.price as number } : {}),
    currency: body.currency as string,
    tags: body.tags as string[],
    status: body.status as MaterialDoc['status'],
    stockAlerts: (body.stockAlerts as MaterialDoc['stockAlerts']) ?? {
      minStock: 0,
      reorderPoint: 0,
      reorderQuantity: 0,
      alertEmails: [],
      alertEnabled: true,
    },
    alternativeUnits: body.alternativeUnits as MaterialDoc['alternativeUnits'],
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  if (kind === 'material')
    return {
      ...common,
      ...(body.category !== undefined ? { category: body.category as string } : {}),
      baseUnit: body.baseUnit as MaterialDoc['baseUnit'],
      costing: {
        method: body.costingMethod as MaterialDoc['costing']['method'],
        initialCost: body.initialCost as number,
      },
      expiration: (body.expiration as MaterialDoc['expiration']) ?? { expires: false, expirationPolicy: 'fefo' },
      suppliers: body.suppliers as MaterialDoc['suppliers'],
      lotTrackingEnabled: body.lotTrackingEnabled as boolean,
    };
  return {
    ...common,
    supplyCategory: body.supplyCategory as SupplyDoc['supplyCategory'],
    consumptionUnit: body.consumptionUnit as string,
    unitPrecision: body.unitPrecision as number,
    ...(body.typicalUsagePerOrder !== undefined ? { typicalUsagePerOrder: body.typicalUsagePerOrder as number } : {}),
    ...(body.shippingAssociation !== undefined ? { shippingAssociation: body.shippingAssociation as string } : {}),
    ...(body.preferredSupplierId !== undefined ? { preferredSupplierId: body.preferredSupplierId as string } : {}),
  };
}

/** Fields a partial update replaces as they come; the nested objects of MERGED are merged. */
const MERGED = ['stockAlerts', 'baseUnit', 'expiration'] as const;

/** The record after a partial update (not yet checked against its stock). */
function patched(doc: StockRecord, body: Body): StockRecord {
  const next = structuredClone(doc) as StockRecord & Body;
  for (const [key, value] of Object.entries(body)) {
    if (key === 'sku') continue;
    if (key === 'title') next.title = titleOf(value);
    else if (key === 'costingMethod') (next as MaterialDoc).costing.method = value as MaterialDoc['costing']['method'];
    else if (key === 'initialCost') (next as MaterialDoc).costing.initialCost = value as number;
    else if ((MERGED as readonly string[]).includes(key))
      next[key] = { ...(next[key] as object), ...(value as object) };
    else next[key] = value;
  }
  return next;
}

export interface ListQuery {
  page: number;
  limit: number;
  category?: string;
  status?: string;
  term?: string;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Material and supply records of one tenant. A record's SKU is claimed in the tenant's one SKU
 * space before the record is written, so a SKU never names a product and a material at once.
 */
export class StockRecords {
  constructor(
    private readonly tenantDb: TenantDb,
    readonly kind: StockKind,
  ) {}

  private col() {
    return this.kind === 'material' ? this.tenantDb.collection(materials) : this.tenantDb.collection(supplies);
  }

  private id(sku: string): string {
    return recordId(this.tenantDb.tenantId, sku.trim());
  }

  async find(sku: string): Promise<StockRecord | null> {
    return (await this.col().findOne({ _id: this.id(sku) })) as StockRecord | null;
  }

  async get(sku: string): Promise<StockRecord> {
    const doc = await this.find(sku);
    if (!doc) throw recordNotFound(this.kind, sku.trim().toUpperCase());
    return doc;
  }

  /** 201 material; 400 duplicate when the SKU is taken by anything in the tenant's SKU space. */
  /** `run`: the request's Idempotency-Key run (KeyedRun), so a retry of a request that died answers the record it made. */
  async create(body: Body, run?: string): Promise<StockRecord> {
    const sku = (body.sku as string).trim().toUpperCase();
    if (RESERVED_SKUS.includes(sku))
      throw invalid(
        'sku',
        `${sku} cannot be a ${this.kind} SKU: GET ${PATHS[this.kind]}/${sku.toLowerCase()} is another route`,
      );
    const now = new Date();
    const record = newRecord(this.kind, body, sku, now);
    const unitProblem = unitErrors(unitsOf(record as StockRecord));
    if (unitProblem) throw unitProblem;
    const _id = this.id(sku);
    const catalog = new Catalog(this.tenantDb);
    try {
      await catalog.claimFor(sku, this.kind, _id);
    } catch (err) {
      if (err instanceof AppError && err.code === 'duplicate-sku') throw this.duplicate(sku, err.message);
      throw err;
    }
    try {
      await this.col().insertOne({ _id, ...record, ...(run ? { createdByRun: run } : {}) } as never);
    } catch (err) {
      // the claim was ours already: the record exists (made by this request's first attempt, or a
      // second create of the same SKU)
      if (isDuplicateKeyError(err)) {
        const earlier = run ? await this.col().findOne({ _id }) : null;
        if (earlier && earlier.createdByRun === run) return earlier as StockRecord;
        throw this.duplicate(sku, `${KIND_LABEL[this.kind]} ${sku} already exists`);
      }
      await catalog.releaseFor(_id, [sku]);
      throw err;
    }
    return { ...record, _id, tenantId: this.tenantDb.tenantId } as StockRecord;
  }

  private duplicate(sku: string, message: string): AppError {
    return new AppError(400, 'duplicate', message, { field: 'sku', details: { sku } });
  }

  /**
   * A partial update, guarded by the version read. Units and currency are what stored balances
   * and lot costs are counted in: they change only while the record has no stock document.
   */
  async update(
    rawSku: string,
    body: Body,
    claimUnits: (sku: string, unit: string, precision: number) => Promise<boolean>,
  ): Promise<StockRecord> {
    const current = await this.get(rawSku);
    if (typeof body.sku === 'string' && body.sku.trim().toUpperCase() !== current.sku)
      throw invalid('sku', `sku cannot change (${current.sku}): create a new record instead`);
    const next = patched(current, body);
    const unitProblem = unitErrors(unitsOf(next));
    if (unitProblem) throw unitProblem;
    const before = unitsOf(current).base;
    const after = unitsOf(next).base;
    const countedIn = before.code !== after.code || before.precision !== after.precision;
    const countingChanges = countedIn || next.currency !== current.currency;
    const hasStock = () => {
      const field = countedIn ? (this.kind === 'material' ? 'baseUnit' : 'consumptionUnit') : 'currency';
      return invalid(
        field,
        `${field} of ${current.sku} cannot change once it has stock records: balances and lot costs are kept in ${before.code} (precision ${before.precision}) and ${current.currency}`,
      );
    };
    if (countingChanges) {
      const stock = await this.tenantDb.collection(materialStock).findOne({ _id: current._id });
      if (stock && !stock.retired && stock.locations.length) throw hasStock();
    }
    const codes = (u: UnitSystem) => new Set(unitCodes(u).map((c) => c.toLowerCase()));
    const kept = codes(unitsOf(next));
    const dropped = [...codes(unitsOf(current))].filter((c) => !kept.has(c));
    if (dropped.length) {
      const users = (await this.unitUsers(current.sku, dropped)).slice(0, 10);
      if (users.length)
        throw invalid(
          'alternativeUnits',
          `unit ${users[0].unit} of ${current.sku} is used by ${users.map((u) => `${u.sku} (${u.as === 'bom' ? 'bill of materials' : 'modifier'})`).join(', ')}: change them first`,
          { reason: 'unit-in-use', usedBy: users },
        );
    }
    const { _id, tenantId: _t, createdAt: _c, ...fields } = next;
    const written = await this.col().findOneAndUpdate(
      { _id, version: current.version } as never,
      { $set: { ...fields, updatedAt: new Date(), version: current.version + 1 } } as never,
      { returnDocument: 'after' },
    );
    if (!written)
      throw new AppError(
        409,
        'conflict',
        `${KIND_LABEL[this.kind]} ${current.sku} changed while this update was applied; read it and retry`,
      );
    // a first receipt may have read the old record meanwhile: its stock document decides which
    // change counted first, and a record whose stock came first goes back to what it was
    if (countingChanges && !(await claimUnits(current.sku, after.code, after.precision))) {
      const { _id: _i, tenantId: _tt, createdAt: _cc, ...was } = current;
      await this.col().updateOne(
        { _id, version: current.version + 1 } as never,
        { $set: { ...was, updatedAt: new Date(), version: current.version + 2 } } as never,
      );
      throw hasStock();
    }
    return written as StockRecord;
  }

  /** Products whose bill of materials or modifiers name a SKU (up to 10). */
  async usedBy(sku: string): Promise<{ sku: string; as: 'bom' | 'modifier' }[]> {
    const found = await this.tenantDb
      .collection(products)
      .find(
        {
          $or: [
            { 'billOfMaterials.components.materialSku': sku },
            { 'billOfMaterials.components.substitutes.materialSku': sku },
            { 'modifiersConfig.groups.modifiers.inventoryConsumption.sku': sku },
          ],
        },
        { projection: { sku: 1, billOfMaterials: 1 }, limit: 10 },
      )
      .toArray();
    return found.map((p) => {
      const bom = p.billOfMaterials?.components?.some(
        (c) => c.materialSku?.toUpperCase() === sku || c.substitutes?.some((s) => s.materialSku?.toUpperCase() === sku),
      );
      return { sku: p.sku, as: bom ? 'bom' : 'modifier' };
    });
  }

  /**
   * Products whose bills of materials or modifiers name a SKU in one of `units` (lower-case). Every
   * product naming the SKU is read (its BOM and modifiers only): those naming it in kept units
   * must not hide one that uses a dropped unit. Rare (an update dropping a unit), so unbounded.
   */
  private async unitUsers(
    sku: string,
    units: string[],
  ): Promise<{ sku: string; as: 'bom' | 'modifier'; unit: string }[]> {
    const found = await this.tenantDb
      .collection(products)
      .find(
        {
          $or: [
            { 'billOfMaterials.components.materialSku': sku },
            { 'modifiersConfig.groups.modifiers.inventoryConsumption.sku': sku },
          ],
        },
        { projection: { sku: 1, billOfMaterials: 1, modifiersConfig: 1 } },
      )
      .toArray();
    const dropped = (unit: string) => units.includes(unit.toLowerCase());
    return found.flatMap((p) => [
      ...(p.billOfMaterials?.components ?? [])
        .filter((c) => c.materialSku === sku && dropped((c as unknown as { unit: string }).unit))
        .map((c) => ({ sku: p.sku, as: 'bom' as const, unit: (c as unknown as { unit: string }).unit })),
      ...(p.modifiersConfig?.groups ?? []).flatMap((g) =>
        g.modifiers.flatMap((m) =>
          (m.inventoryConsumption as { sku: string; unit: string }[])
            .filter((c) => c.sku === sku && dropped(c.unit))
            .map((c) => ({ sku: p.sku, as: 'modifier' as const, unit: c.unit })),
        ),
      ),
    ]);
  }

  /**
   * Deletes a record that no bill of materials or modifier uses (400 naming which) and, through
   * `retireStock`, that has no stock (it refuses otherwise). The ledger stays.
   */
  async delete(rawSku: string, retireStock: (sku: string, recordCreatedAt: Date) => Promise<void>): Promise<void> {
    const current = await this.get(rawSku);
    const sku = current.sku;
    // marked before looking who names it: a product write that names it from now on refuses it,
    // and one that named it before (holdNamed) is seen by its mark or, once stored, by usedBy
    const marked = await this.col().findOneAndUpdate(
      { _id: current._id } as never,
      { $set: { deletingAt: new Date() } } as never,
      { returnDocument: 'after' },
    );
    if (!marked) throw recordNotFound(this.kind, sku);
    const unmark = () => this.col().updateOne({ _id: current._id } as never, { $unset: { deletingAt: '' } } as never);
    const namedAt = (marked as StockRecord).namedAt;
    if (namedAt && Date.now() - namedAt.getTime() < NAMED_HOLD_MS) {
      await unmark();
      throw new AppError(
        409,
        'conflict',
        `${KIND_LABEL[this.kind]} ${sku} was named by a product write moments ago: retry the delete in ${Math.ceil((NAMED_HOLD_MS - (Date.now() - namedAt.getTime())) / 1000)} s`,
        { field: 'sku' },
      );
    }
    const users = await this.usedBy(sku);
    if (users.length) {
      await unmark();
      const names = users.map((u) => `${u.sku} (${u.as === 'bom' ? 'bill of materials' : 'modifier'})`).join(', ');
      throw new AppError(
        400,
        'validation-error',
        `${KIND_LABEL[this.kind]} ${sku} is used by ${names}: remove it there first`,
        {
          field: 'sku',
          details: { reason: 'in-use', usedBy: users },
        },
      );
    }
    try {
      await retireStock(sku, current.createdAt);
    } catch (err) {
      await unmark();
      throw err;
    }
    await this.col().deleteOne({ _id: current._id } as never);
    await new Catalog(this.tenantDb).releaseFor(current._id, [sku]);
  }

  async list(q: ListQuery): Promise<{ docs: StockRecord[]; total: number }> {
    const filter: Record<string, unknown> = {};
    if (q.status) filter.status = q.status;
    if (q.category) filter[this.kind === 'material' ? 'category' : 'supplyCategory'] = q.category;
    if (q.term) {
      const re = { $regex: escapeRegex(q.term.trim()), $options: 'i' };
      filter.$or = [{ sku: re }, { 'title.value': re }];
    }
    const col = this.col();
    const [docs, total] = await Promise.all([
      col.find(filter as never, { sort: { sku: 1 }, ...pageWindow0(q) }).toArray(),
      col.countDocuments(filter as never),
    ]);
    return { docs: docs as StockRecord[], total };
  }
}

/** A quantity's unit must be one of the record's: a 400 naming it otherwise. */
export function unknownUnit(doc: StockRecord, unit: string): AppError {
  const known = unitCodes(unitsOf(doc)).join(', ');
  return invalid('unit', `Unknown unit '${unit}' for ${doc.sku}: known units are ${known}`, { unit });
}
