import { ObjectId } from 'mongodb';
import { ConsumptionEngine, ConsumptionRefused } from '../consumption/engine';
import type { ConsumptionPlan, PlannedLine, Shortfall } from '../consumption/collections';
import { BeyondAnyStock, planConsumption, type PlanInput, type StoredBom } from '../consumption/plan';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { Ledger } from '../inventory/ledger';
import { holdsNoStock, isCalculatedBundle } from '../inventory/stock-view';
import { Locations } from '../locations/locations';
import { fromMinor, MAX_MINOR } from '../materials/quantity';
import { productSkus, products } from '../products/collections';
import type { ProductDoc } from '../products/types';
import { orders, type OrderDoc, type OrderEvent, type OrderStockEffects, type SaleLine } from './collections';
import { canMove, NEEDS_REASON, type OrderState } from './lifecycle';
import { orderErrors, orderEvent, orderEventKey, parseOrderId } from './service';
import { recordEvent } from '../webhooks/events';

/** What accepting an order will take: its lines' sales and its materials. */
export interface OrderStockPlan {
  locationId: string;
  sales: SaleLine[];
  consumption: ConsumptionPlan | null;
  consumptionId: string | null;
}

export interface MoveOutcome {
  orderId: string;
  externalId: string;
  orderStatus: OrderState;
  previousStatus: OrderState;
  updatedAt: string;
}

function insufficient(
  orderId: string,
  products: { sku: string; onHand: number; required: number }[],
  materials: Shortfall[],
): AppError {
  const names = [...products.map((p) => p.sku), ...materials.map((m) => m.materialSku)];
  return new AppError(
    409,
    'orders:insufficient_stock',
    `Order ${orderId} cannot be accepted: not enough stock of ${names.join(', ')}`,
    { details: { products, materials } },
  );
}

function outcome(doc: OrderDoc, from: OrderState): MoveOutcome {
  return {
    orderId: doc._id.toHexString(),
    externalId: doc.externalId,
    orderStatus: doc.orderStatus,
    previousStatus: from,
    updatedAt: doc.updatedAt.toISOString(),
  };
}

/**
 * The stock side of an order's acceptance and cancellation, one step per method so that the order
 * workflow (workflows/orders/order-stock.workflow.ts) decides and compensates between them. Every
 * step is safe to run again: sales and returns are ledger movements keyed by the workflow run and
 * line, the materials go through the consumption engine under one id, and the moves of the order
 * carry event ids that a repeat recognises.
 */
export class OrderStock {
  constructor(
    private readonly tenantDb: TenantDb,
    private readonly actor: string,
  ) {}

  private get orders() {
    return this.tenantDb.collection(orders);
  }

  private async order(orderId: string): Promise<OrderDoc> {
    const _id = parseOrderId(orderId);
    const doc = _id ? await this.orders.findOne({ _id }) : null;
    if (!doc) throw orderErrors.notFound(orderId);
    return doc;
  }

  /**
   * What accepting the order takes at its location: each line's product (unless it holds no stock)
   * and the materials of BOMs consumed on sale and of the selected modifiers. 409 naming every SKU
   * short (a product that sells when out of stock is never short); 409 when the order is not pending.
   */
  async plan(orderId: string, runId: string, beat: () => void = () => {}): Promise<OrderStockPlan> {
    const order = await this.order(orderId);
    if (!canMove(order.orderStatus, 'accepted'))
      throw orderErrors.invalidTransition(orderId, order.orderStatus, 'accepted');
    // a location gone since the order was made (deleted in a race with its check) takes no sale
    if (order.locationId && !(await new Locations(this.tenantDb).getRaw(order.locationId)))
      throw orderErrors.invalid(
        `the order's location ${order.locationId} no longer exists: cancel the order and create it at another location`,
      );
    const locationId = order.locationId ?? (await new Locations(this.tenantDb).defaultId());
    const docs = await this.productsHolding(order.items.map((i) => i.sku));
    // a calculated bundle's components are sold in its place: they are read too
    const components = docs.flatMap((d) => (isCalculatedBundle(d) ? d.bundleConfig!.components : []));
    docs.push(...(await this.productsHolding(components.map((c) => c.productSku))));
    const productOf = (sku: string): ProductDoc | undefined =>
      docs.find((d) => d.sku === sku || d.variants.some((v) => v.sku === sku));
    // a variant's own setting decides for it (the spec gives every variant one, default false)
    const sellsShort = (sku: string, product: ProductDoc) =>
      Boolean((product.variants.find((v) => v.sku === sku) ?? product).sellIfOutOfStock);
    const stockless = (sku: string, product: ProductDoc) => holdsNoStock(product, sku);

    const sales: SaleLine[] = [];
    /** Each line's materials to plan: an on-sale BOM and the selected modifiers' materials. */
    const consuming: { index: number; input: Omit<PlanInput, 'locationId' | 'allowSubstitutes'> }[] = [];
    for (const [i, item] of order.items.entries()) {
      beat();
      const product = productOf(item.sku);
      if (!product) throw orderErrors.invalid(`item ${item.sku} is no longer in the catalog`);
      if (isCalculatedBundle(product))
        // no stock of its own: each component is sold, as many times as the bundle holds it
        for (const [k, c] of product.bundleConfig!.components.entries()) {
          const component = productOf(c.productSku);
          if (!component)
            throw orderErrors.invalid(`item ${item.sku}'s component ${c.productSku} is no longer in the catalog`);
          if (stockless(c.productSku, component)) continue;
          sales.push({
            sku: c.productSku,
            quantity: item.quantity * (c.quantity ?? 1),
            allowNegative: sellsShort(c.productSku, component),
            key: `ordsale:${orderId}:${runId}:${i}:${k}`,
          });
        }
      else if (!stockless(item.sku, product))
        sales.push({
          sku: item.sku,
          quantity: item.quantity,
          allowNegative: sellsShort(item.sku, product),
          key: `ordsale:${orderId}:${runId}:${i}`,
        });
      const bom = product.billOfMaterials as StoredBom | undefined;
      const modifierMaterials = (item.selectedModifiers ?? []).flatMap((m) =>
        m.inventoryConsumption.map((c) => ({ ...c, times: 1 })),
      );
      if (bom?.consumptionMode !== 'on_sale' && !modifierMaterials.length) continue;
      consuming.push({
        index: i,
        input: { bom: bom?.consumptionMode === 'on_sale' ? bom : null, modifierMaterials, quantity: item.quantity },
      });
    }
    const { lines, beyond } = await this.plannedMaterials(consuming, locationId, beat);

    const ledger = new Ledger(this.tenantDb);
    const wanted = new Map<string, number>();
    for (const s of sales) if (!s.allowNegative) wanted.set(s.sku, (wanted.get(s.sku) ?? 0) + s.quantity);
    const shortProducts = (
      await Promise.all(
        [...wanted].map(async ([sku, required]) => ({ sku, required, onHand: await ledger.onHand(sku, locationId) })),
      )
    ).filter((p) => p.onHand < p.required);
    const beyondSkus = new Set(beyond.map((b) => b.materialSku));
    const shortMaterials = [
      ...beyond,
      ...(await this.materialShortfalls(
        lines.filter((l) => !beyondSkus.has(l.sku)),
        locationId,
      )),
    ];
    if (shortProducts.length || shortMaterials.length) throw insufficient(orderId, shortProducts, shortMaterials);
    const consumptionId = lines.length ? `order:${orderId}:${runId}` : null;
    return { locationId, sales, consumption: lines.length ? { locationId, lines } : null, consumptionId };
  }

  /** The products (by their own or a variant's SKU) holding these SKUs. */
  private async productsHolding(skus: string[]): Promise<ProductDoc[]> {
    if (!skus.length) return [];
    const claims = await this.tenantDb
      .collection(productSkus)
      .find({ sku: { $in: [...new Set(skus)] } })
      .toArray();
    const ids = [...new Set(claims.map((c) => c.productId))].flatMap((id) =>
      ObjectId.isValid(id) ? [new ObjectId(id)] : [],
    );
    return ids.length
      ? this.tenantDb
          .collection(products)
          .find({ _id: { $in: ids } })
          .toArray()
      : [];
  }

  /**
   * What the lines' materials take, as one consumption. The lines share the location's stock and,
   * as within one BOM, the required needs (required components and modifiers' materials) of every
   * line are planned before any line's optional components: an optional part is left out when
   * what the required needs and the optional parts of earlier lines leave cannot cover it, never
   * a later line's required need. A need no stock can hold (BeyondAnyStock, a BOM run's 400) is
   * to an order a shortage of its material: `beyond` names it, and the other lines plan on.
   */
  private async plannedMaterials(
    consuming: { index: number; input: Omit<PlanInput, 'locationId' | 'allowSubstitutes'> }[],
    locationId: string,
    beat: () => void,
  ): Promise<{ lines: PlannedLine[]; beyond: Shortfall[] }> {
    const takenBefore = new Map<string, number>();
    const byLine = new Map<number, PlannedLine[]>();
    const beyond = new Map<string, Shortfall>();
    for (const parts of ['required', 'optional'] as const)
      for (const { index, input } of consuming) {
        beat();
        const optional = input.bom?.components.some((c) => c.required === false) ?? false;
        const required =
          input.modifierMaterials.length > 0 || !!input.bom?.components.some((c) => c.required !== false);
        if (!(parts === 'optional' ? optional : required)) continue;
        try {
          const plan = await planConsumption(this.tenantDb, {
            ...input,
            locationId,
            allowSubstitutes: false,
            takenBefore,
            parts,
          });
          byLine.set(index, [...(byLine.get(index) ?? []), ...plan.wanted]);
          for (const l of plan.wanted) takenBefore.set(l.sku, (takenBefore.get(l.sku) ?? 0) + l.minor);
        } catch (err) {
          if (!(err instanceof BeyondAnyStock)) throw err;
          beyond.set(err.shortfall.materialSku, err.shortfall);
        }
      }
    // in the order of the lines, as the accept's stock_changed event lists them
    return { lines: consuming.flatMap(({ index }) => byLine.get(index) ?? []), beyond: [...beyond.values()] };
  }

  /** Materials whose lines, summed over every order line, need more than the location has. */
  private async materialShortfalls(lines: PlannedLine[], locationId: string): Promise<Shortfall[]> {
    if (!lines.length) return [];
    const bySku = new Map<string, PlannedLine & { total: number }>();
    for (const l of lines) {
      const at = bySku.get(l.sku);
      if (at) at.total += l.minor;
      else bySku.set(l.sku, { ...l, total: l.minor });
    }
    // lines that each fit may sum beyond what a stock can hold: such a material is checked at the
    // most a stock holds (more than any location has) and shown short of the lines' whole sum
    const check = await planConsumption(this.tenantDb, {
      bom: null,
      modifierMaterials: [...bySku.values()].map((l) => ({
        sku: l.sku,
        quantity: fromMinor(Math.min(l.total, MAX_MINOR), l.precision),
        unit: l.unit,
        times: 1,
      })),
      quantity: 1,
      locationId,
      allowSubstitutes: false,
    });
    return check.shortfalls.map((f) => {
      const l = bySku.get(f.materialSku);
      if (!l || l.total <= MAX_MINOR) return f;
      const required = fromMinor(l.total, l.precision);
      const error = `Not enough ${f.materialSku} at ${locationId}: ${f.available} ${f.unit} available, ${required} ${f.unit} required`;
      return { ...f, required, error };
    });
  }

  /** Takes each line's sale; a guarded line short by now is a 409 (the workflow puts back the others). */
  async applySales(orderId: string, plan: OrderStockPlan, beat: () => void = () => {}): Promise<void> {
    const ledger = new Ledger(this.tenantDb);
    for (const s of plan.sales) {
      beat();
      try {
        await ledger.apply({
          sku: s.sku,
          locationId: plan.locationId,
          delta: -s.quantity,
          reason: 'sale',
          reference: { type: 'order', id: orderId },
          actor: this.actor,
          idempotencyKey: s.key,
          allowNegative: s.allowNegative,
        });
      } catch (err) {
        if (err instanceof AppError && err.code === 'conflict/insufficient-stock') {
          const d = err.extra.details as { onHand: number; wanted: number };
          throw insufficient(orderId, [{ sku: s.sku, onHand: d.onHand, required: d.wanted }], []);
        }
        throw err;
      }
    }
  }

  /** Takes the order's materials, all or nothing (409 naming the materials short). */
  async consumeMaterials(orderId: string, plan: OrderStockPlan): Promise<void> {
    if (!plan.consumption || !plan.consumptionId) return;
    try {
      await new ConsumptionEngine(this.tenantDb, this.actor).run(
        plan.consumptionId,
        { type: 'order', id: orderId },
        plan.consumption,
      );
    } catch (err) {
      if (err instanceof ConsumptionRefused) throw insufficient(orderId, [], err.shortfalls);
      throw err;
    }
  }

  /** Puts back every sale that applied and the materials; once, however often it runs. */
  async returnStock(
    orderId: string,
    effects: Pick<OrderStockEffects, 'locationId' | 'sales' | 'consumptionId'>,
    beat: () => void = () => {},
  ) {
    const ledger = new Ledger(this.tenantDb);
    for (const s of effects.sales) {
      beat();
      const sale = await ledger.movement(s.key);
      if (sale?.status !== 'applied') continue;
      await ledger.apply({
        sku: s.sku,
        locationId: sale.locationId,
        delta: -sale.delta,
        reason: 'return',
        reference: { type: 'order', id: orderId },
        actor: this.actor,
        idempotencyKey: `return:${s.key}`,
      });
    }
    if (effects.consumptionId) await new ConsumptionEngine(this.tenantDb, this.actor).giveBack(effects.consumptionId);
  }

  /** The event ids a run writes: a repeated step finds its own event and does not write it again. */
  private event(id: string, type: OrderEvent['type'], details: Record<string, unknown>): OrderEvent {
    return { id, type, actor: this.actor, timestamp: new Date(), details };
  }

  /** pending → accepted with the stock effects and their audit events, in one guarded update. */
  async markAccepted(
    orderId: string,
    plan: OrderStockPlan,
    runId: string,
    via: string,
    reason?: string,
  ): Promise<MoveOutcome> {
    const order = await this.order(orderId);
    const eventId = `${runId}:accepted`;
    if (order.audit.some((e) => e.id === eventId)) return this.announced(order, eventId, 'pending');
    if (!canMove(order.orderStatus, 'accepted'))
      throw orderErrors.invalidTransition(orderId, order.orderStatus, 'accepted');
    const effects: OrderStockEffects = {
      runId,
      locationId: plan.locationId,
      sales: plan.sales,
      consumptionId: plan.consumptionId,
    };
    const moved = this.event(eventId, 'status_changed', {
      from: order.orderStatus,
      to: 'accepted',
      via,
      ...(reason ? { reason } : {}),
    });
    const stock = this.event(`${runId}:stock-taken`, 'stock_changed', {
      effect: 'taken',
      locationId: plan.locationId,
      sales: plan.sales.map((s) => ({ sku: s.sku, quantity: s.quantity, reason: 'sale' })),
      materials: (plan.consumption?.lines ?? []).map((l) => ({
        sku: l.sku,
        quantity: fromMinor(l.minor, l.precision),
        unit: l.unit,
      })),
      consumptionId: plan.consumptionId,
    });
    const doc = await this.orders.findOneAndUpdate(
      { _id: order._id, orderStatus: order.orderStatus },
      {
        $set: { orderStatus: 'accepted', stock: effects, updatedAt: moved.timestamp },
        $push: { audit: { $each: [moved, stock] } },
      } as never,
      { returnDocument: 'after' },
    );
    if (!doc) {
      const now = await this.order(orderId);
      if (now.audit.some((e) => e.id === eventId)) return this.announced(now, eventId, 'pending');
      throw orderErrors.invalidTransition(orderId, now.orderStatus, 'accepted');
    }
    return this.announced(doc, eventId, order.orderStatus);
  }

  /**
   * Records the move's webhook event after the move (a step retried until it succeeds), keyed by
   * its audit event: a repeated step, finding its move made, records it again as the same event.
   */
  private async announced(doc: OrderDoc, eventId: string, from: OrderState): Promise<MoveOutcome> {
    const id = doc._id.toHexString();
    await recordEvent(this.tenantDb, {
      type: 'order.status_changed',
      key: orderEventKey(id, eventId),
      ...orderEvent(doc, eventId),
    });
    return outcome(doc, from);
  }

  /** Moves the order to cancelled (guarded); answers the move and the stock effects to put back. */
  async markCancelled(
    orderId: string,
    runId: string,
    via: string,
    reason?: string,
  ): Promise<{ outcome: MoveOutcome; stock: OrderStockEffects | null }> {
    const eventId = `${runId}:cancelled`;
    for (let attempt = 0; attempt < 5; attempt++) {
      const order = await this.order(orderId);
      const done = order.audit.find((e) => e.id === eventId);
      if (done)
        return {
          outcome: await this.announced(order, eventId, done.details.from as OrderState),
          stock: order.stock ?? null,
        };
      if (!canMove(order.orderStatus, 'cancelled'))
        throw orderErrors.invalidTransition(orderId, order.orderStatus, 'cancelled');
      if (NEEDS_REASON.has('cancelled') && !reason)
        throw orderErrors.invalid('reason is required to move an order to cancelled');
      const ev = this.event(eventId, 'status_changed', {
        from: order.orderStatus,
        to: 'cancelled',
        via,
        ...(reason ? { reason } : {}),
      });
      const doc = await this.orders.findOneAndUpdate(
        { _id: order._id, orderStatus: order.orderStatus },
        {
          $set: {
            orderStatus: 'cancelled',
            updatedAt: ev.timestamp,
            ...(order.stock ? { stockReturnPending: true } : {}),
          },
          $push: { audit: ev },
        } as never,
        { returnDocument: 'after' },
      );
      if (doc) return { outcome: await this.announced(doc, eventId, order.orderStatus), stock: doc.stock ?? null };
    }
    throw new AppError(409, 'orders:conflict', `Order ${orderId} kept changing; read it again and retry`);
  }

  /** Records on the order that its stock went back (once per run). */
  async recordReturned(orderId: string, runId: string, effects: OrderStockEffects): Promise<void> {
    const _id = parseOrderId(orderId);
    // the materials returned are those the accept took: its own event lists them
    const order = await this.orders.findOne({ _id: _id! } as never, { projection: { audit: 1 } });
    const taken = (order?.audit ?? [])
      .filter(
        (e) =>
          e.type === 'stock_changed' &&
          e.details.effect === 'taken' &&
          e.details.consumptionId === effects.consumptionId,
      )
      .pop();
    const materials = effects.consumptionId
      ? ((taken?.details.materials as { sku: string; quantity: number; unit: string }[] | undefined) ?? [])
      : [];
    // a material deleted since the accept had nothing to go back into (ConsumptionEngine.putBack):
    // it is named apart, not among the materials returned
    const consumption = effects.consumptionId
      ? await new ConsumptionEngine(this.tenantDb, this.actor).find(effects.consumptionId)
      : null;
    const gone = new Set(consumption?.notReturned ?? []);
    const ev = this.event(`${runId}:stock-returned`, 'stock_changed', {
      effect: 'returned',
      locationId: effects.locationId,
      sales: effects.sales.map((s) => ({ sku: s.sku, quantity: s.quantity, reason: 'return' })),
      materials: materials.filter((m) => !gone.has(m.sku)),
      ...(gone.size
        ? {
            materialsNotReturned: materials
              .filter((m) => gone.has(m.sku))
              .map((m) => ({ ...m, reason: 'material deleted since the order was accepted' })),
          }
        : {}),
      consumptionId: effects.consumptionId,
    });
    await this.orders.updateOne(
      // "no event has this id": the embedded FerretDB answers {'audit.id': {$ne}} true when any
      // event's id differs (MongoDB: when none equals), so the positive match is negated instead
      { _id: _id!, $nor: [{ 'audit.id': ev.id }] } as never,
      { $push: { audit: ev }, $unset: { stockReturnPending: '' } } as never,
    );
  }
}
