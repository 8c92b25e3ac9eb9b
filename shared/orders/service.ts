import { untilWritten } from '../db/until-written';
import { ObjectId, type Filter } from 'mongodb';
import type { Db } from 'mongodb';
import { isDeepStrictEqual } from 'node:util';
import { tenants } from '../auth/collections';
import { timeZoneOf } from '../auth/tenancy';
import {
  centsOf,
  checkSelection,
  selectionsFromPairs,
  type ModifiersConfig,
  type SelectionResult,
} from '../modifiers/selection';
import { isDuplicateKeyError } from '../db/duplicate-key';
import { systemCollection, type TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { derivedObjectId } from '../ids';
import { customerLinkState, linkRefusal } from '../customers/links';
import { Locations } from '../locations/locations';
import { pageWindow, slicePage, type PageRequest } from '../paging';
import { productSkus, products } from '../products/collections';
import { recordAround, type EventData } from '../webhooks/events';
import {
  orderComments,
  orders,
  type OrderComment,
  type OrderDoc,
  type OrderEvent,
  type OrderItem,
} from './collections';
import { canMove, NEEDS_REASON, NEXT, type OrderState } from './lifecycle';
import { presentOrder } from './present';

export const orderErrors = {
  notFound: (id: string) => new AppError(404, 'orders:not_found', `No order ${id}`),
  invalid: (message: string) => new AppError(400, 'validation:invalid_input', message),
  invalidTransition: (id: string, from: OrderState, to: string) =>
    new AppError(
      409,
      'orders:invalid_transition',
      `Order ${id} is ${from}; it cannot move to ${to}. Allowed moves from ${from}: ${NEXT[from].length ? NEXT[from].join(', ') : 'none (final state)'}`,
    ),
  conflict: (id: string) => new AppError(409, 'orders:conflict', `Order ${id} kept changing; read it again and retry`),
  duplicateExternalId: (externalId: string, id?: string) =>
    new AppError(
      409,
      'orders:duplicate_external_id',
      `An order with externalId ${externalId} already exists${id ? ` (${id})` : ''}`,
    ),
};

export interface NewOrder {
  externalId: string;
  customerInfo: { name: string; [more: string]: unknown };
  shippingAddress?: OrderDoc['shippingAddress'];
  notes?: string;
  locationId?: string;
  /** A customer of the tenant (24 hex), not redacted. */
  customerId?: string;
  items: {
    sku: string;
    quantity: number;
    price?: number;
    selectedModifiers?: { groupId: string; modifierId: string; quantity?: number }[];
  }[];
}

const cents = (n: number) => Math.round(n * 100);
const money = (c: number) => c / 100;
/**
 * A line's total in cents, rounded once (half up) after multiplying: a unit price with fractions
 * of a cent (0.005 a screw) totals what it says (100 of them 0.50), not its price rounded up to a
 * cent first (1.00). Prices count in millionths, exactly, as BigInt.
 */
const lineCents = (price: number, quantity: number) =>
  Number((BigInt(Math.round(price * 1e6)) * BigInt(quantity) + 5000n) / 10000n);

/**
 * A unit price after its modifiers, exactly (in millionths): the adjustments are whole cents, the
 * base may hold fractions of one (0.005 + 0.50 = 0.505). A `replace` adjustment is the modifier's
 * price less the base's cents, so the base's fraction of a cent goes with the base it replaces.
 */
function adjustedPrice(base: number, result: SelectionResult): number {
  if (!result.selectedModifiers.some((m) => m.priceAdjustment)) return base;
  const baseMillionths = BigInt(Math.round(base * 1e6));
  const replaced = result.selectedModifiers.some((m) => m.priceAdjustment?.type === 'replace');
  // the base's cents as the replace adjustment counted them (adjustmentCents), from its decimal digits
  const fraction = replaced ? baseMillionths - centsOf(base) * 10_000n : 0n;
  return Number(baseMillionths + BigInt(cents(result.totalPriceAdjustment)) * 10_000n - fraction) / 1e6;
}

/**
 * The tax on taxable cents at a rate, rounded once, half up, exactly: the rate as written (7.25 %
 * is 0.0725, not the double nearest it), so 30.00 at 7.25 % is 2.18 (2.175), not 2.17.
 */
function taxOf(taxableCents: number, rate: number): number {
  const [digits, exp] = rate.toExponential().split('e');
  const [int, frac = ''] = digits.replace('-', '').split('.');
  const scale = frac.length - Number(exp); // rate = int.frac × 10^exp = (int frac) / 10^scale
  const numerator = BigInt(taxableCents) * BigInt(int + frac);
  if (scale <= 0) return Number(numerator * 10n ** BigInt(-scale));
  const denominator = 10n ** BigInt(scale);
  return Number((numerator * 2n + denominator) / (2n * denominator));
}

function event(
  type: OrderEvent['type'],
  actor: string,
  details: Record<string, unknown>,
  timestamp = new Date(),
): OrderEvent {
  return { id: new ObjectId().toHexString(), type, actor, timestamp, details };
}

export function parseOrderId(id: string): ObjectId | null {
  return /^[0-9a-f]{24}$/i.test(id) ? new ObjectId(id) : null;
}

/**
 * What an order's webhook event says once the change that pushed audit event `auditId` is made:
 * the order as GET /orders/{id} presents it, and as sequence the length of its audit trail up to
 * that event (every change of an order pushes one, so it rises with every change).
 */
export function orderEvent(doc: OrderDoc, auditId: string): EventData {
  const at = doc.audit.findIndex((e) => e.id === auditId);
  return {
    id: doc._id.toHexString(),
    sequence: at < 0 ? doc.audit.length : at + 1,
    resource: presentOrder(doc),
  };
}

/** The webhook event key of the change that pushed audit event `auditId`: one event per change. */
export function orderEventKey(orderId: string, auditId: string): string {
  return `order:${orderId}:${auditId}`;
}

/**
 * The update that gives `paths` (top-level or `field.member`) the values they have in `doc`:
 * absent ones are unset, and a member of an object `doc` lacks goes with the whole object.
 */
function valuesAt(doc: OrderDoc, paths: string[]): { $set: Record<string, unknown>; $unset: Record<string, ''> } {
  const fields = doc as unknown as Record<string, unknown>;
  const $set: Record<string, unknown> = {};
  const $unset: Record<string, ''> = {};
  for (const path of paths) {
    const [field, member] = path.split('.');
    const parent = fields[field];
    if (member === undefined) {
      if (parent === undefined) $unset[field] = '';
      else $set[field] = parent;
    } else if (!parent || typeof parent !== 'object') $unset[field] = '';
    else if ((parent as Record<string, unknown>)[member] === undefined) $unset[path] = '';
    else $set[path] = (parent as Record<string, unknown>)[member];
  }
  for (const path of Object.keys($unset)) if (path.includes('.') && path.split('.')[0] in $unset) delete $unset[path];
  return { $set, $unset };
}

/** The top-level fields whose stored value `set`/`unset` would change, in the order they were sent. */
function changedFields(doc: OrderDoc, set: Record<string, unknown>, unset: Record<string, ''>): string[] {
  const now = valuesAt(doc, [...Object.keys(set), ...Object.keys(unset)]);
  const changed = new Set<string>();
  for (const [path, value] of Object.entries(set))
    if (!(path in now.$set) || !isDeepStrictEqual(now.$set[path], value)) changed.add(path.split('.')[0]);
  for (const path of Object.keys(unset)) if (!(path in now.$unset)) changed.add(path.split('.')[0]);
  return [...changed];
}

const ADDRESS_REQUIRED = ['street', 'city', 'zipCode', 'country'] as const;

/** An order without an address gains a whole one (as create requires), never a lone part of it. */
function requireWholeAddress(address: unknown): void {
  const sent = address as Record<string, unknown>;
  const missing = ADDRESS_REQUIRED.filter((f) => sent[f] === undefined);
  if (missing.length)
    throw orderErrors.invalid(
      `shippingAddress: the order has no address yet, so send a whole one; missing ${missing.join(', ')}`,
    );
}

/** A guarded write that found the order changed since it was read: nothing was written (read again). */
class StateMoved extends Error {}

/** A plain move found the order in a state its `plain` check refuses (it now holds stock to put back). */
export class MoveNeedsStock extends Error {}

/** Orders of one tenant: creation with server-computed totals, partial updates, comments and guarded moves. */
export class Orders {
  constructor(
    private readonly db: Db,
    private readonly tenantDb: TenantDb,
    private readonly actor: string,
  ) {}

  private get orders() {
    return this.tenantDb.collection(orders);
  }

  async get(id: string): Promise<OrderDoc> {
    const _id = parseOrderId(id);
    const doc = _id ? await this.orders.findOne({ _id }) : null;
    if (!doc) throw orderErrors.notFound(id);
    return doc;
  }

  /**
   * Prices come from the catalog unless the line gives one; tax is the tenant's rate on taxable
   * lines. `id`: derived from the request's Idempotency-Key, so a retry of a request that died
   * finds the order it made, announced under the same event.
   */
  async create(order: NewOrder, id?: ObjectId): Promise<OrderDoc> {
    // stored as customers' ids are written (lower-case hex), so GET /customers/{id}/orders finds it
    const input = order.customerId ? { ...order, customerId: order.customerId.toLowerCase() } : order;
    const tenant = await systemCollection(this.db, tenants).findOne({ _id: this.tenantDb.tenantId });
    if (input.locationId && !(await new Locations(this.tenantDb).getRaw(input.locationId)))
      throw orderErrors.invalid(`locationId ${input.locationId} is not a location of the tenant`);
    if (input.customerId) await this.requireCustomer(input.customerId);
    const taxRate = tenant?.settings.taxRate ?? 0;
    const items = await this.priceItems(input.items, timeZoneOf(tenant));
    const currencies = new Set(items.map((i) => i.currency));
    if (currencies.size > 1)
      throw orderErrors.invalid(`items are priced in more than one currency (${[...currencies].join(', ')})`);
    const subtotalCents = items.reduce((sum, i) => sum + cents(i.lineTotal), 0);
    const taxCents = taxOf(
      items.filter((i) => i.taxable).reduce((sum, i) => sum + cents(i.lineTotal), 0),
      taxRate,
    );
    if (!Number.isSafeInteger(subtotalCents + taxCents))
      throw orderErrors.invalid('the order total is too large to count exactly in cents');
    const now = new Date();
    const _id = id ?? new ObjectId();
    const created = event('created', this.actor, { externalId: input.externalId }, now);
    if (id) created.id = derivedObjectId(`${_id.toHexString()}:created`).toHexString();
    const doc: OrderDoc = {
      _id,
      tenantId: this.tenantDb.tenantId,
      externalId: input.externalId,
      orderStatus: 'pending',
      customerInfo: input.customerInfo,
      ...(input.shippingAddress ? { shippingAddress: input.shippingAddress } : {}),
      ...(input.notes !== undefined ? { notes: input.notes } : {}),
      ...(input.locationId ? { locationId: input.locationId } : {}),
      ...(input.customerId ? { customerId: input.customerId } : {}),
      items: items.map(({ currency: _c, ...item }) => item),
      currency: items[0].currency,
      subtotal: money(subtotalCents),
      tax: money(taxCents),
      taxRate,
      total: money(subtotalCents + taxCents),
      audit: [created],
      createdAt: now,
      updatedAt: now,
    };
    return this.announce('order.created', doc, doc.audit[0].id, async () => {
      let made: OrderDoc;
      try {
        const { tenantId: _t, ...rest } = doc;
        made = (await this.orders.insertOnce(rest)) ?? doc;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
        const existing = await this.orders.findOne({ externalId: input.externalId }, { projection: { _id: 1 } });
        throw orderErrors.duplicateExternalId(input.externalId, existing?._id.toHexString());
      }
      if (input.customerId) {
        // the customer may have been deleted or redacted between the check and the insert: leave no order naming it
        const state = await customerLinkState(this.tenantDb, input.customerId);
        if (state !== 'ok') {
          await this.orders.deleteOne({ _id: doc._id });
          throw orderErrors.invalid(linkRefusal(input.customerId, state));
        }
      }
      return made;
    });
  }

  /**
   * Makes one change of an order (`run`, which pushes audit event `auditId`) with its webhook
   * event, so that a change the API makes is announced even if this process dies half-way.
   */
  private announce(
    type: string,
    order: Pick<OrderDoc, '_id'>,
    auditId: string,
    run: () => Promise<OrderDoc>,
  ): Promise<OrderDoc> {
    const id = order._id.toHexString();
    return recordAround(this.tenantDb, { type, key: orderEventKey(id, auditId), kind: 'order', id }, run, (doc) =>
      orderEvent(doc, auditId),
    );
  }

  /** 409 customer-redacted: the customer fields of a redacted customer's order stay redacted (privacy outlives edits). */
  private async keepRedacted(current: OrderDoc): Promise<void> {
    const customerId = (current as { customerId?: string }).customerId;
    if (customerId && (await customerLinkState(this.tenantDb, customerId)) === 'redacted')
      throw new AppError(
        409,
        'customer-redacted',
        `Order ${current._id.toHexString()} belongs to a redacted customer: its customerInfo and shippingAddress stay redacted`,
      );
  }

  /** 400 naming customerId unless it is a customer of the tenant that is not redacted. */
  private async requireCustomer(customerId: string): Promise<void> {
    const state = await customerLinkState(this.tenantDb, customerId);
    if (state !== 'ok') throw orderErrors.invalid(linkRefusal(customerId, state));
  }

  /**
   * Prices each line: the line's price, else the variant's or the product's, plus its selected
   * modifiers' adjustments (validated by the product's selection rules, in the tenant's time zone).
   */
  private async priceItems(lines: NewOrder['items'], timeZone: string): Promise<(OrderItem & { currency: string })[]> {
    const skus = [...new Set(lines.map((l) => l.sku.toUpperCase()))];
    const claims = await this.tenantDb
      .collection(productSkus)
      .find({ sku: { $in: skus } })
      .toArray();
    const missing = skus.filter((s) => !claims.some((c) => c.sku === s));
    if (missing.length)
      throw orderErrors.invalid(`items reference SKUs that are not in the catalog: ${missing.join(', ')}`);
    const unsellable = claims.filter((c) => c.kind === 'material' || c.kind === 'supply').map((c) => c.sku);
    if (unsellable.length)
      throw orderErrors.invalid(
        `items reference materials or supplies, which an order does not sell (a product's BOM consumes them): ${unsellable.join(', ')}`,
      );
    const ids = [...new Set(claims.map((c) => c.productId))].map((id) => new ObjectId(id));
    const docs = await this.tenantDb
      .collection(products)
      .find({ _id: { $in: ids } })
      .toArray();
    const now = new Date();
    return lines.map((line, i) => {
      const sku = line.sku.toUpperCase();
      const product = docs.find((d) => d.sku === sku || d.variants.some((v) => v.sku === sku));
      if (!product) throw orderErrors.invalid(`item SKU ${sku} is not in the catalog`);
      const variant = product.variants.find((v) => v.sku === sku);
      const base = line.price ?? variant?.price ?? product.price;
      let price = base;
      let selectedModifiers: OrderItem['selectedModifiers'];
      // a product whose modifiers are on has its rules checked with no selection too: a required
      // group (a pizza's size) must be chosen, as the validate endpoint says
      if (line.selectedModifiers?.length || product.modifiersConfig?.enabled) {
        const result = checkSelection(
          product.modifiersConfig as unknown as ModifiersConfig,
          selectionsFromPairs(line.selectedModifiers ?? []),
          { basePrice: base, variantSku: variant?.sku, now, timeZone },
        );
        if (!result.valid)
          throw orderErrors.invalid(
            `items.${i}.selectedModifiers: ${result.errors.map((e) => `${e.message} (${e.rule})`).join('; ')}`,
          );
        price = adjustedPrice(base, result);
        if (result.selectedModifiers.length)
          selectedModifiers = result.selectedModifiers.map((m) => ({
            groupId: m.groupId,
            groupName: m.groupName,
            modifierId: m.modifierId,
            modifierName: m.modifierName,
            quantity: m.quantity,
            priceAdjustment: m.priceAdjustment?.amount ?? 0,
            inventoryConsumption: m.inventoryConsumption,
          }));
      }
      // a product priced beyond reason can still overflow a total: refuse what cannot be counted in exact cents
      const totalCents = lineCents(price, line.quantity);
      if (!Number.isSafeInteger(totalCents))
        throw orderErrors.invalid(
          `items.${i}: price ${price} × quantity ${line.quantity} is too large to total exactly`,
        );
      return {
        sku,
        name: (variant ?? product).title.value,
        quantity: line.quantity,
        price,
        taxable: variant ? variant.taxable : product.taxable,
        lineTotal: money(totalCents),
        ...(selectedModifiers ? { selectedModifiers } : {}),
        currency: product.currency,
      };
    });
  }

  async list(q: { status?: string[]; externalId?: string; from?: string; to?: string } & PageRequest) {
    const filter: Filter<OrderDoc> = {};
    if (q.status?.length) filter.orderStatus = { $in: q.status as OrderState[] };
    if (q.externalId) filter.externalId = q.externalId;
    if (q.from || q.to)
      filter.createdAt = { ...(q.from ? { $gte: new Date(q.from) } : {}), ...(q.to ? { $lte: new Date(q.to) } : {}) };
    const [docs, total] = await Promise.all([
      this.orders.find(filter, { sort: { createdAt: -1, _id: -1 }, ...pageWindow(q) }).toArray(),
      this.orders.countDocuments(filter),
    ]);
    return { docs, total };
  }

  /**
   * Partial update of the replaceable fields. Nested objects merge (only the properties sent
   * change); the audit event is pushed in the same atomic update.
   */
  async update(id: string, changes: Record<string, unknown>): Promise<OrderDoc> {
    const personal = 'customerInfo' in changes || 'shippingAddress' in changes;
    const patch =
      typeof changes.customerId === 'string' ? { ...changes, customerId: changes.customerId.toLowerCase() } : changes;
    const customerId = typeof patch.customerId === 'string' ? patch.customerId : undefined;
    const set: Record<string, unknown> = {};
    const unset: Record<string, ''> = {};
    for (const [field, value] of Object.entries(patch)) {
      if ((field === 'customerInfo' || field === 'shippingAddress') && value && typeof value === 'object') {
        for (const [k, v] of Object.entries(value)) set[`${field}.${k}`] = v;
      } else if (field === 'customerId' && value === null) unset.customerId = '';
      else set[field] = value;
    }
    return this.asRead(id, async (current) => {
      if (personal) await this.keepRedacted(current);
      if (customerId) await this.requireCustomer(customerId);
      if (patch.shippingAddress && !current.shippingAddress) requireWholeAddress(patch.shippingAddress);
      // a body that changes nothing records nothing: the trail and order.updated name real changes only
      const fields = changedFields(current, set, unset);
      if (fields.length === 0) return current;
      const ev = event('updated', this.actor, { fields });
      return this.announce('order.updated', current, ev.id, async () => {
        let written: OrderDoc;
        try {
          written = await this.write(current, set, ev, unset, personal);
        } catch (err) {
          if (err instanceof StateMoved || typeof patch.externalId !== 'string') throw err;
          // the unique index refused the new externalId: MongoDB says so with E11000, FerretDB with an
          // internal error, so the order that holds it decides (nothing was written either way)
          const holder = await this.orders.findOne(
            { externalId: patch.externalId, _id: { $ne: current._id } },
            { projection: { _id: 1 } },
          );
          if (holder || isDuplicateKeyError(err))
            throw orderErrors.duplicateExternalId(patch.externalId, holder?._id.toHexString());
          throw err;
        }
        if (customerId) {
          // deleted or redacted between the check and the write: undo what this request wrote
          const state = await customerLinkState(this.tenantDb, customerId);
          if (state !== 'ok') {
            await this.undo(current, set, unset, ev, customerId);
            throw orderErrors.invalid(linkRefusal(customerId, state));
          }
        }
        return written;
      });
    });
  }

  /**
   * Undoes this request's write (`set`/`unset`, which pushed `ev`) after its customer check
   * failed. If nothing else changed the order since it was read, it goes back exactly so (its
   * event too: it was never announced). Else only the fields it wrote go back, while they still
   * hold what it wrote, so a status move made since, with the stock it took, stays; and if a later
   * write changed one of them, the refused customer is still unlinked. Such an undo is a change of
   * its own with its own event (the trail only grows: webhook sequences are its length).
   */
  private async undo(
    before: OrderDoc,
    set: Record<string, unknown>,
    unset: Record<string, ''>,
    ev: OrderEvent,
    customerId: string,
  ): Promise<void> {
    const { _id } = before;
    const mine = [...Object.keys(set), ...Object.keys(unset)];
    const was = valuesAt(before, mine);
    // every change of an order pushes an event: the trail as read plus this write's means no other change
    const alone = await this.orders.updateOne(
      { _id, audit: { $size: before.audit.length + 1 } } as Filter<OrderDoc>,
      {
        $set: { ...was.$set, audit: before.audit, updatedAt: before.updatedAt },
        ...(Object.keys(was.$unset).length ? { $unset: was.$unset } : {}),
      } as never,
    );
    if (alone.matchedCount) return;
    const guard: Record<string, unknown> = { _id };
    for (const path of Object.keys(set)) guard[path] = set[path];
    for (const path of Object.keys(unset)) guard[path] = { $exists: false };
    const undone = event('updated', this.actor, { fields: ev.details.fields, undoes: ev.id });
    const putBack = (filter: Record<string, unknown>, paths: string[]) => {
      const { $set, $unset } = valuesAt(before, paths);
      return this.orders.findOneAndUpdate(
        filter as Filter<OrderDoc>,
        {
          $set: { ...$set, updatedAt: undone.timestamp },
          ...(Object.keys($unset).length ? { $unset } : {}),
          $push: { audit: undone },
        } as never,
        { returnDocument: 'after' },
      );
    };
    try {
      await this.announce('order.updated', before, undone.id, async () => {
        const doc = (await putBack(guard, mine)) ?? (await putBack({ _id, customerId }, ['customerId']));
        // nothing of this request's is left to undo
        if (!doc) throw new StateMoved();
        return doc;
      });
    } catch (err) {
      if (!(err instanceof StateMoved)) throw err;
    }
  }

  /** Replaces customerInfo as a whole. */
  async updateCustomer(id: string, customerInfo: Record<string, unknown>): Promise<OrderDoc> {
    return this.asRead(id, async (current) => {
      await this.keepRedacted(current);
      const ev = event('customer_updated', this.actor, {});
      return this.announce('order.updated', current, ev.id, () => this.write(current, { customerInfo }, ev, {}, true));
    });
  }

  /** Runs `change` on the order as read; when its guarded write finds the order changed, reads again and decides again. */
  private async asRead(id: string, change: (current: OrderDoc) => Promise<OrderDoc>): Promise<OrderDoc> {
    return untilWritten(
      async () => {
        try {
          return await change(await this.get(id));
        } catch (err) {
          if (!(err instanceof StateMoved)) throw err;
          return undefined;
        }
      },
      () => orderErrors.conflict(id),
    );
  }

  /**
   * One atomic update with its audit event. `personal`: only while customerInfo and
   * shippingAddress are as read and no redaction wrote them since (StateMoved otherwise), so that
   * a redaction made since the read is not undone by data checked before it, even one that wrote
   * the values read (an order redacted for an earlier customer, then relinked).
   */
  private async write(
    current: OrderDoc,
    set: Record<string, unknown>,
    ev: OrderEvent,
    unset: Record<string, ''> = {},
    personal = false,
  ): Promise<OrderDoc> {
    const unchanged = personal
      ? {
          customerInfo: current.customerInfo,
          shippingAddress: current.shippingAddress === undefined ? { $exists: false } : current.shippingAddress,
          ...(current.redaction ? { 'redaction.at': current.redaction.at } : { redaction: { $exists: false } }),
        }
      : {};
    // the other fields it changes must still hold what they held when read: the change (and its
    // event) was decided on them, so a concurrent identical request records no second one
    const read = current as unknown as Record<string, unknown>;
    for (const field of [...Object.keys(set), ...Object.keys(unset)])
      if (!field.includes('.'))
        (unchanged as Record<string, unknown>)[field] = field in read ? read[field] : { $exists: false };
    const doc = await this.orders.findOneAndUpdate(
      { _id: current._id, ...unchanged } as Filter<OrderDoc>,
      {
        $set: { ...set, updatedAt: ev.timestamp },
        ...(Object.keys(unset).length ? { $unset: unset } : {}),
        $push: { audit: ev },
      } as never,
      { returnDocument: 'after' },
    );
    if (doc) return doc;
    if (await this.orders.findOne({ _id: current._id }, { projection: { _id: 1 } })) throw new StateMoved();
    throw orderErrors.notFound(current._id.toHexString());
  }

  /**
   * One lifecycle move, as a single guarded atomic update: it applies only if the order is still
   * in the state it was read in, and its audit event is pushed by that same update. Of any number
   * of concurrent conflicting moves exactly one wins; the others see the new state and get 409.
   */
  async move(
    id: string,
    to: OrderState,
    via: string,
    reason?: string,
    /** Whether this order, as read, may take the move without its stock (else MoveNeedsStock). */
    plain: (order: OrderDoc) => boolean = () => true,
  ): Promise<{ doc: OrderDoc; from: OrderState }> {
    return untilWritten(
      async () => {
        const current = await this.get(id);
        const from = current.orderStatus;
        if (!canMove(from, to)) throw orderErrors.invalidTransition(id, from, to);
        // read again after a lost race: an acceptance that won it took stock this move must not keep
        if (!plain(current)) throw new MoveNeedsStock();
        if (NEEDS_REASON.has(to) && !reason) throw orderErrors.invalid(`reason is required to move an order to ${to}`);
        const ev = event('status_changed', this.actor, { from, to, via, ...(reason ? { reason } : {}) });
        try {
          const doc = await this.announce('order.status_changed', current, ev.id, async () => {
            const doc = await this.orders.findOneAndUpdate(
              { _id: current._id, orderStatus: from },
              { $set: { orderStatus: to, updatedAt: ev.timestamp }, $push: { audit: ev } } as never,
              { returnDocument: 'after' },
            );
            if (!doc) throw new StateMoved();
            return doc;
          });
          return { doc, from };
        } catch (err) {
          if (!(err instanceof StateMoved)) throw err;
          // the state changed under us: decide again from the new state
          return undefined;
        }
      },
      () => orderErrors.conflict(id),
    );
  }

  async comment(id: string, comment: string, idempotencyKey?: string): Promise<OrderComment> {
    const order = await this.get(id);
    const doc: Omit<OrderComment, 'tenantId'> = {
      _id: new ObjectId(),
      orderId: order._id.toHexString(),
      comment,
      actor: this.actor,
      idempotencyKey: idempotencyKey ?? new ObjectId().toHexString(),
      timestamp: new Date(),
    };
    const comments = this.tenantDb.collection(orderComments);
    const retried = () => comments.findOne({ orderId: doc.orderId, idempotencyKey: doc.idempotencyKey });
    // a retried request: the comment is already there once, and was announced then; another
    // comment under the key is not its retry
    const sameRequest = (c: OrderComment) => {
      if (c.comment !== comment)
        throw new AppError(
          409,
          'idempotency-key-reused',
          'This Idempotency-Key was used for another comment on this order: send a new key for a new comment',
        );
      return c;
    };
    const before = idempotencyKey ? await retried() : null;
    if (before) return sameRequest(before);
    const commentId = doc._id.toHexString();
    try {
      return await recordAround(
        this.tenantDb,
        { type: 'order.comment_added', key: `order-comment:${commentId}`, kind: 'order-comment', id: commentId },
        async () => {
          await comments.insertOne(doc);
          return { ...doc, tenantId: this.tenantDb.tenantId };
        },
        (c) => ({
          id: commentId,
          sequence: 1,
          resource: { id: commentId, orderId: c.orderId, comment: c.comment, actor: c.actor, timestamp: c.timestamp },
        }),
      );
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      // a concurrent retry of the request inserted it first
      const existing = await retried();
      if (!existing) throw err;
      return sameRequest(existing);
    }
  }

  /** One page of the order's comments and audit events, oldest first. */
  async activity(id: string, paging: PageRequest) {
    const order = await this.get(id);
    const comments = await this.tenantDb
      .collection(orderComments)
      .find({ orderId: order._id.toHexString() }, { sort: { timestamp: 1, _id: 1 } })
      .toArray();
    const entries = [
      ...order.audit.map((e) => ({
        id: e.id,
        type: e.type,
        actor: e.actor,
        timestamp: e.timestamp,
        details: e.details,
      })),
      ...comments.map((c) => ({
        id: c._id.toHexString(),
        type: 'comment' as const,
        actor: c.actor,
        timestamp: c.timestamp,
        details: { comment: c.comment },
      })),
    ];
    entries.sort((a, b) => a.timestamp.getTime() - b.timestamp.getTime() || (a.id < b.id ? -1 : 1));
    return { entries: slicePage(entries, paging), total: entries.length };
  }
}
