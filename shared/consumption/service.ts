import { ObjectId } from 'mongodb';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { Locations } from '../locations/locations';
import { costMicros, fromMicros, valueOf } from '../materials/quantity';
import { costNow, isMaterial, kindOf, unitsOf, type StockRecord } from '../materials/records';
import { StockStore, type Seed } from '../materials/stock';
import { Catalog } from '../products/catalog';
import { products } from '../products/collections';
import type { ProductDoc } from '../products/types';
import { TAKEN, type ConsumedSku, type Shortfall } from './collections';
import { ConsumptionEngine, ConsumptionRefused, type RunResult } from './engine';
import { planConsumption, type ModifierMaterial, type Plan, type StoredBom } from './plan';
import { basePriceFor, checkSelection, selectionsFromPairs, type ModifiersConfig } from '../modifiers/selection';

export interface SelectedModifier {
  groupId: string;
  modifierId: string;
  quantity?: number;
}

/** The common input of the consumption routes. */
export interface ConsumptionRequest {
  productSku: string;
  locationId: string;
  quantity?: number;
  selectedModifiers?: SelectedModifier[];
}

export interface BomRunRequest {
  quantity: number;
  referenceId?: string;
  referenceType?: 'order' | 'production' | 'sample' | 'waste';
  allowSubstitutes?: boolean;
  notes?: string;
  locationId?: string;
}

const BOM_NOT_FOUND = 'Product or BOM not found';

/**
 * What a consumption asked for, as one text: a request under the id of a consumption already
 * made is its retry only when it asks the same (selections in any order).
 */
function consumeAsked(req: ConsumptionRequest & { options?: { method?: string } }): string {
  const selections = (req.selectedModifiers ?? [])
    .map((m) => [m.groupId, m.modifierId, m.quantity ?? 1] as const)
    .sort((a, b) => (a.join('\u0000') < b.join('\u0000') ? -1 : 1));
  return JSON.stringify([
    req.productSku.toUpperCase(),
    req.quantity ?? 1,
    req.locationId,
    selections,
    req.options?.method ?? null,
  ]);
}

/** What a BOM run asked for (its notes are a label, not part of it). */
const bomRunAsked = (req: BomRunRequest): string =>
  JSON.stringify([req.quantity, req.locationId ?? null, req.allowSubstitutes === true]);

/**
 * 409 for a request under the reference (or Idempotency-Key) of another consumption: it is not a
 * retry of it, and answering it as one would say stock was taken that was not.
 */
function reused(reference: string | null, first: string, field: string): AppError {
  return reference
    ? new AppError(409, 'conflict', `${reference} was used for ${first}: give each consumption its own`, { field })
    : new AppError(
        409,
        'idempotency-key-reused',
        `This Idempotency-Key was used for ${first}: send a new key for another consumption`,
        { field },
      );
}

/** Σ of costs when they share a currency; null (with each currency's total) when they do not. */
function totalsOf(costs: ({ total: number; currency: string } | null)[]) {
  const byCurrency = new Map<string, number>();
  for (const c of costs)
    if (c) byCurrency.set(c.currency, (byCurrency.get(c.currency) ?? 0) + Math.round(c.total * 100));
  if (byCurrency.size > 1)
    return {
      totalCost: null,
      currency: null,
      totals: [...byCurrency].map(([currency, cents]) => ({ currency, totalCost: cents / 100 })),
    };
  const [entry] = [...byCurrency];
  return { totalCost: entry ? entry[1] / 100 : 0, currency: entry ? entry[0] : null };
}

/** Shortfalls as the error bodies list them. */
const errorsOf = (shortfalls: Shortfall[]) =>
  shortfalls.map(({ materialSku, required, available, unit, error }) => ({
    materialSku,
    required,
    available,
    unit,
    error,
  }));

const lotsOf = (c: ConsumedSku) =>
  c.lots.map((l) => ({ lotNumber: l.lotNumber, quantity: l.quantity, costPerUnit: l.costPerUnit }));

function costPerUnit(c: ConsumedSku): number {
  return c.cost && c.quantity > 0 ? Math.round((c.cost.total / c.quantity) * 1e6) / 1e6 : 0;
}

/** What a plan read of each SKU, for its movements to start from. */
function seedsOf(plan: Plan): Map<string, Seed> {
  return new Map([...plan.records].map(([sku, record]) => [sku, { record, stock: plan.stocks.get(sku) ?? null }]));
}

/** The current cost of one base unit of a record: a material's costing, a supply's price. */
async function unitCostOf(tenantDb: TenantDb, record: StockRecord): Promise<number> {
  if (!isMaterial(record)) return record.price ?? 0;
  return costNow(record, await new StockStore(tenantDb, 'material').stockOf(record.sku));
}

/**
 * Consumption of materials and supplies by products: a BOM run (`POST /products/{sku}/bom/consume`)
 * and the consumption routes (check, estimate, consume). Consuming goes through the engine
 * (engine.ts): all or nothing, exactly once per reference.
 */
/**
 * Runs a consumption planned on this process's copies of the stock, and once more planned on a
 * fresh read when the stock refused it: a copy that showed more than there is must not fail a
 * run the stock can take (with an optional component left out, or a substitute).
 */
async function freshOnRefusal(run: (fromMemory: boolean) => Promise<RunResult>): Promise<RunResult> {
  try {
    return await run(true);
  } catch (err) {
    if (!(err instanceof ConsumptionRefused)) throw err;
    return run(false);
  }
}

export class ConsumptionService {
  private readonly engine: ConsumptionEngine;

  constructor(
    private readonly tenantDb: TenantDb,
    actor: string,
    /** The tenant's time zone, in which modifiers' hours and days are read (asked only for a selection). */
    private readonly timeZone: () => Promise<string> = async () => 'UTC',
  ) {
    this.engine = new ConsumptionEngine(tenantDb, actor);
  }

  /** The product a SKU names (a variant's SKU names its product when `variants`); 404 otherwise. */
  private async product(
    sku: string,
    variants: boolean,
    message: string,
  ): Promise<{ product: ProductDoc; variantSku?: string }> {
    const wanted = sku.trim().toUpperCase();
    if (!variants) {
      // a product's own SKU: one read by its unique index, no claim needed
      const product = await this.tenantDb.collection(products).findOne({ sku: wanted });
      if (!product) throw new AppError(404, 'not-found', message, { field: 'sku' });
      return { product };
    }
    const catalog = new Catalog(this.tenantDb);
    const claim = await catalog.skuOwner(wanted);
    const product = claim ? await catalog.get(claim.productId) : null;
    if (!product) throw new AppError(404, 'not-found', message, { field: 'sku' });
    return { product, ...(claim!.kind === 'variant' ? { variantSku: claim!.sku } : {}) };
  }

  private async location(locationId: string | undefined): Promise<string> {
    const locations = new Locations(this.tenantDb);
    if (!locationId) return locations.defaultId();
    if (!(await locations.getRaw(locationId)))
      throw new AppError(404, 'not-found', `Location ${locationId} not found`, { field: 'locationId' });
    return locationId;
  }

  /**
   * The materials of selected modifiers: each named group and modifier must exist on the product,
   * and the selection must pass the product's selection rules (checkSelection, as the validate
   * endpoint and order creation judge it): 400 validation-error naming each rule that failed.
   */
  private async modifierMaterials(
    product: ProductDoc,
    selected: SelectedModifier[] = [],
    variantSku?: string,
  ): Promise<ModifierMaterial[]> {
    const groups = product.modifiersConfig?.groups ?? [];
    const materials = selected.flatMap((s, i) => {
      const group = groups.find((g) => g.id === s.groupId);
      const modifier = group?.modifiers.find((m) => m.id === s.modifierId);
      if (!group || !modifier)
        throw new AppError(
          400,
          'validation-error',
          `selectedModifiers.${i}: ${group ? `modifier ${s.modifierId} is not in group ${s.groupId}` : `group ${s.groupId} is not a modifier group of ${product.sku}`}`,
          { field: `selectedModifiers.${i}.${group ? 'modifierId' : 'groupId'}` },
        );
      const uses = modifier.inventoryConsumption as { sku: string; quantity: number; unit: string }[];
      return uses.map((u) => ({ sku: u.sku, quantity: u.quantity, unit: u.unit, times: s.quantity ?? 1 }));
    });
    if (selected.length) {
      const result = checkSelection(
        product.modifiersConfig as unknown as ModifiersConfig,
        selectionsFromPairs(selected),
        {
          basePrice: basePriceFor(product, variantSku) ?? product.price,
          variantSku,
          now: new Date(),
          timeZone: await this.timeZone(),
        },
      );
      if (!result.valid)
        throw new AppError(
          400,
          'validation-error',
          `selectedModifiers: ${result.errors.map((e) => `${e.message} (${e.rule})`).join('; ')}`,
          { field: 'selectedModifiers', details: { errors: result.errors } },
        );
    }
    return materials;
  }

  /** `fromMemory` for a run: see PlanInput. */
  private async planFor(
    req: ConsumptionRequest,
    fromMemory = false,
  ): Promise<{ plan: Plan; product: ProductDoc; locationId: string }> {
    const located = this.location(req.locationId);
    located.catch(() => undefined); // answered after the product's 404
    const { product, variantSku } = await this.product(
      req.productSku,
      true,
      `Product ${req.productSku.toUpperCase()} not found`,
    );
    const locationId = await located;
    const plan = await planConsumption(this.tenantDb, {
      bom: (product.billOfMaterials as StoredBom | undefined) ?? null,
      modifierMaterials: await this.modifierMaterials(product, req.selectedModifiers, variantSku),
      quantity: req.quantity ?? 1,
      locationId,
      allowSubstitutes: false,
      fromMemory,
    });
    return { plan, product, locationId };
  }

  /** Availability of every material the product needs, consuming nothing. */
  async check(req: ConsumptionRequest) {
    const { plan } = await this.planFor(req);
    const show = (record: StockRecord, minor: number) => minor / 10 ** unitsOf(record).base.precision;
    const byMaterial = [...plan.bySku.values()].map(({ record, required }) => ({
      materialSku: record.sku,
      kind: kindOf(record),
      quantity: show(record, required),
      unit: unitsOf(record).base.code,
    }));
    const details = [...plan.bySku.values()].map(({ record, required, available }) => ({
      materialSku: record.sku,
      required: show(record, required),
      available: show(record, available),
      unit: unitsOf(record).base.code,
      sufficient: available >= required,
    }));
    return {
      available: plan.shortfalls.length === 0,
      calculation: { components: plan.demands, totalMaterials: byMaterial.length, byMaterial },
      details,
    };
  }

  /** What the consumption would cost now: each material at its current cost (a supply at its price). */
  async estimate(req: ConsumptionRequest) {
    const { plan } = await this.planFor(req);
    const breakdown = await Promise.all(
      [...plan.bySku.values()].map(async ({ record, required }) => {
        const base = unitsOf(record).base;
        const unitCost = await unitCostOf(this.tenantDb, record);
        return {
          materialSku: record.sku,
          quantity: required / 10 ** base.precision,
          unit: base.code,
          costPerUnit: fromMicros(costMicros(unitCost)),
          totalCost: valueOf(required, base.precision, costMicros(unitCost)),
          currency: record.currency,
        };
      }),
    );
    return {
      ...totalsOf(breakdown.map((b) => ({ total: b.totalCost, currency: b.currency }))),
      breakdown,
    };
  }

  /**
   * Exactly once per id: `apply` plans and runs the consumption, its record inserted at once (a
   * new consumption, the usual case, costs no read to find it absent); when it exists already, or
   * anything refuses, the consumption as stored decides: one already taken answers as it was
   * (replayed), whatever would refuse it now. A refusal for want of stock becomes `refused(shortfalls)`.
   */
  private async once(
    consumptionId: string,
    refused: (shortfalls: Shortfall[]) => AppError,
    apply: () => Promise<RunResult>,
  ): Promise<RunResult> {
    try {
      return await apply();
    } catch (err) {
      let done = await this.engine.find(consumptionId);
      // still being decided (by a request under way, or one whose process died): this request's
      // plan saw the stock it took, so the stored plan is driven to its decision, which answers
      if (done && (done.status === 'pending' || done.status === 'failing')) {
        await this.engine.finish(done);
        done = await this.engine.find(consumptionId);
      }
      if (done && TAKEN.has(done.status)) return { doc: done, replayed: true };
      if (err instanceof ConsumptionRefused) throw refused(err.shortfalls);
      throw err;
    }
  }

  /**
   * Consumes the product's materials: all or nothing (400 consumption-failed naming every
   * shortfall), exactly once per options.referenceId (or the request's Idempotency-Key).
   */
  async consume(
    req: ConsumptionRequest & {
      options?: { method?: 'fifo' | 'lifo'; referenceId?: string; referenceType?: string };
    },
    idempotencyKey?: string,
  ) {
    const ref = req.options?.referenceId;
    const consumptionId = ref
      ? `mc:${ref}`
      : idempotencyKey
        ? `mck:${idempotencyKey}`
        : `mc1:${new ObjectId().toHexString()}`;
    const result = await this.once(
      consumptionId,
      (shortfalls) =>
        new AppError(400, 'consumption-failed', `Consumption failed: ${shortfalls.map((s) => s.error).join('; ')}`, {
          errors: errorsOf(shortfalls),
        }),
      () =>
        freshOnRefusal(async (fromMemory) => {
          const { plan, locationId } = await this.planFor(req, fromMemory);
          if (plan.shortfalls.length) throw new ConsumptionRefused(plan.shortfalls);
          return this.engine.run(
            consumptionId,
            ref ? { type: req.options?.referenceType ?? 'consumption', id: ref } : null,
            { locationId, method: req.options?.method, lines: plan.lines },
            { productSku: req.productSku.toUpperCase(), quantity: req.quantity ?? 1, request: consumeAsked(req) },
            seedsOf(plan),
            fromMemory ? null : undefined,
          );
        }),
    );
    // one referenceId (or key) is one consumption: another product, quantity, location or
    // selection under it is not this one
    const first = result.doc.meta as { productSku?: string; quantity?: number; request?: string };
    const productSku = req.productSku.toUpperCase();
    const differs =
      first.request !== undefined
        ? first.request !== consumeAsked(req)
        : first.productSku !== undefined && (first.productSku !== productSku || first.quantity !== (req.quantity ?? 1));
    if (differs)
      throw reused(
        ref ? `referenceId ${ref}` : null,
        `${first.quantity} of ${first.productSku} at ${result.doc.plan.locationId}`,
        ref ? 'options.referenceId' : 'Idempotency-Key',
      );
    const consumed = result.doc.consumed ?? [];
    return {
      success: true,
      consumptionId: result.doc.consumptionId,
      replayed: result.replayed,
      locationId: result.doc.plan.locationId,
      consumed: consumed.map((c) => ({
        materialSku: c.sku,
        quantity: c.quantity,
        unit: c.unit,
        costPerUnit: costPerUnit(c),
        totalCost: c.cost?.total ?? 0,
        lotsConsumed: lotsOf(c),
      })),
      ...totalsOf(consumed.map((c) => c.cost)),
      errors: [],
    };
  }

  /**
   * One run of a product's BOM: produces `quantity` (in the yield's unit) from real stock at the
   * location (default the tenant's default): all or nothing (400 insufficient-stock naming every
   * shortfall), exactly once per (product, referenceType, referenceId).
   */
  async runBom(sku: string, req: BomRunRequest, idempotencyKey?: string) {
    // read with the product; a missing location is answered after a replay (in `once`)
    const located = this.location(req.locationId);
    located.catch(() => undefined);
    const { product } = await this.product(sku, false, BOM_NOT_FOUND);
    const bom = product.billOfMaterials as StoredBom | undefined;
    if (!bom) throw new AppError(404, 'not-found', BOM_NOT_FOUND, { field: 'sku' });
    const referenceType = req.referenceType ?? 'production';
    const consumptionId = req.referenceId
      ? `bom:${product.sku}:${referenceType}:${req.referenceId}`
      : idempotencyKey
        ? `bomk:${product.sku}:${idempotencyKey}`
        : `bom1:${new ObjectId().toHexString()}`;
    const result = await this.once(
      consumptionId,
      (shortfalls) =>
        new AppError(
          400,
          'insufficient-stock',
          `Not enough stock to produce ${req.quantity} ${bom.yield.unit} of ${product.sku}: ${shortfalls.map((s) => s.error).join('; ')}`,
          { errors: errorsOf(shortfalls) },
        ),
      () =>
        freshOnRefusal(async (fromMemory) => {
          const locationId = await located;
          const plan = await planConsumption(this.tenantDb, {
            bom,
            modifierMaterials: [],
            quantity: req.quantity,
            locationId,
            allowSubstitutes: req.allowSubstitutes === true,
            fromMemory,
          });
          if (plan.shortfalls.length) throw new ConsumptionRefused(plan.shortfalls);
          return this.engine.run(
            consumptionId,
            { type: referenceType, id: req.referenceId ?? consumptionId },
            { locationId, lines: plan.lines },
            {
              quantityProduced: req.quantity,
              unit: bom.yield.unit,
              referenceId: req.referenceId ?? null,
              referenceType,
              notes: req.notes ?? null,
              substituted: plan.lines.filter((l) => l.source === 'substitute').map((l) => l.sku),
              // the location it ran at: a retry naming the default location asks the same as one leaving it out
              request: bomRunAsked({ ...req, locationId }),
            },
            seedsOf(plan),
            fromMemory ? null : undefined,
          );
        }),
    );
    const { doc } = result;
    // a run under the same reference (or key) asking for something else is not a retry of it; runs
    // recorded before the location was resolved in it hold the location as sent
    const resolved = await located.catch(() => req.locationId ?? null);
    const asked = [bomRunAsked({ ...req, locationId: resolved ?? undefined }), bomRunAsked(req)];
    if (doc.meta.request !== undefined && !asked.includes(doc.meta.request as string))
      throw reused(
        req.referenceId ? `referenceId ${req.referenceId} (${referenceType})` : null,
        `a run of ${doc.meta.quantityProduced} ${doc.meta.unit} at ${doc.plan.locationId}`,
        req.referenceId ? 'referenceId' : 'Idempotency-Key',
      );
    const consumed = doc.consumed ?? [];
    const substituted = new Set((doc.meta.substituted as string[] | undefined) ?? []);
    return {
      success: true,
      sku: product.sku,
      quantityProduced: doc.meta.quantityProduced,
      unit: doc.meta.unit,
      componentsConsumed: consumed.map((c) => ({
        materialSku: c.sku,
        quantity: c.quantity,
        unit: c.unit,
        costPerUnit: costPerUnit(c),
        totalCost: c.cost?.total ?? 0,
        substituted: substituted.has(c.sku),
        lotsConsumed: lotsOf(c),
      })),
      ...totalsOf(consumed.map((c) => c.cost)),
      referenceId: doc.meta.referenceId,
      referenceType: doc.meta.referenceType,
      notes: doc.meta.notes,
      locationId: doc.plan.locationId,
      consumptionId: doc.consumptionId,
      consumedAt: doc.updatedAt,
      replayed: result.replayed,
    };
  }
}
