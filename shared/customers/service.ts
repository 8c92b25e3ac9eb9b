import { ObjectId, type Filter, type UpdateFilter } from 'mongodb';
import { isDeepStrictEqual } from 'node:util';
import { untilWritten } from '../db/until-written';
import { isDuplicateKeyError } from '../db/duplicate-key';
import type { TenantDb } from '../db/tenant-db';
import { orderComments, orders, type OrderComment, type OrderDoc } from '../orders/collections';
import { pageWindow, type PageRequest } from '../paging';
import { recordAround, type AroundChange, type EventData } from '../webhooks/events';
import { customers, emailKeyOf, type CustomerAddress, type CustomerDoc } from './collections';
import { EmailClaims } from './email-claims';
import { customerErrors } from './errors';
import { presentCustomer } from './present';
import { REDACTED_MEMBERS, REDACTED_NAME, redactKeptEvents, redactOrdersOf } from './redaction';

export interface CustomerInput {
  name: string;
  email?: string;
  phone?: string;
  addresses?: CustomerAddress[];
  taxId?: string;
  tags?: string[];
  notes?: string;
}

/** A partial update: only the members sent change; `null` clears an optional one (addresses and tags become empty). */
export interface CustomerPatch {
  name?: string;
  email?: string | null;
  phone?: string | null;
  addresses?: CustomerAddress[] | null;
  taxId?: string | null;
  tags?: string[] | null;
  notes?: string | null;
}

export interface CustomerListQuery extends PageRequest {
  /** Matches name, e-mail, phone or taxId, any case. */
  q?: string;
  /** A tag the customer has, exactly as stored. */
  tag?: string;
}

/** Everything stored about a customer: the customer and its orders in full, each with its comments. */
export interface CustomerExport {
  customer: CustomerDoc;
  orders: (OrderDoc & { comments: OrderComment[] })[];
}

/** A customer id is a 24-hex ObjectId; anything else is no customer. */
export function parseCustomerId(id: string): ObjectId | null {
  return typeof id === 'string' && /^[0-9a-f]{24}$/i.test(id) ? new ObjectId(id) : null;
}

/** A version-guarded write that found the customer changed since it was read: nothing was written. */
class Changed extends Error {}

/** A customer's webhook event: the customer as GET /customers/{id} presents it, its version as sequence. */
function customerEvent(doc: CustomerDoc): EventData {
  return { id: doc._id.toHexString(), sequence: doc.version, resource: presentCustomer(doc) };
}

/** The event of the change that takes a customer to `version`: one per change, since every change adds one. */
function customerChange(type: string, id: string, version: number, deletion?: AroundChange['deletion']): AroundChange {
  return {
    type,
    key: `customer:${id}:v${version}`,
    kind: 'customer',
    id,
    sequence: version,
    ...(deletion ? { deletion } : {}),
  };
}
const OPTIONAL_TEXT = ['phone', 'taxId', 'notes'] as const;

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Text as stored: trimmed; blank is no value. */
function text(v: string | null | undefined): string | undefined {
  const t = typeof v === 'string' ? v.trim() : '';
  return t ? t : undefined;
}

/** Trimmed, blank ones dropped, each once (first spelling kept). */
function cleanTags(tags: string[] | null | undefined): string[] {
  return [...new Set((tags ?? []).map((t) => t.trim()).filter(Boolean))];
}

function cleanAddresses(addresses: CustomerAddress[] | null | undefined): CustomerAddress[] {
  return (addresses ?? []).map((a) => {
    const out: CustomerAddress = {
      street: a.street.trim(),
      city: a.city.trim(),
      zipCode: a.zipCode.trim(),
      country: a.country.trim().toUpperCase(),
    };
    const label = text(a.label);
    const state = text(a.state);
    return { ...(label ? { label } : {}), ...out, ...(state ? { state } : {}) };
  });
}

/** Customers of one tenant: CRUD with one customer per e-mail, their orders, redaction and data export. */
export class Customers {
  private readonly claims: EmailClaims;

  constructor(
    private readonly tenantDb: TenantDb,
    /** Who acts (the key id), for the audit events redaction writes on orders. */
    private readonly actor: string,
  ) {
    this.claims = new EmailClaims(tenantDb);
  }

  private get col() {
    return this.tenantDb.collection(customers);
  }

  private get orderCol() {
    return this.tenantDb.collection(orders);
  }

  /** The tenant's customer; null for a malformed id, an absent one or another tenant's (a primary-key read). */
  async get(id: string): Promise<CustomerDoc | null> {
    const _id = parseCustomerId(id);
    return _id ? this.col.findOne({ _id }) : null;
  }

  /** The customer, or 404 not-found. */
  async require(id: string): Promise<CustomerDoc> {
    const doc = await this.get(id);
    if (!doc) throw customerErrors.notFound(id);
    return doc;
  }

  /** Newest first. */
  async list(q: CustomerListQuery): Promise<{ docs: CustomerDoc[]; total: number }> {
    const filter: Filter<CustomerDoc> = {};
    const words = q.q?.trim();
    if (words) {
      const re = new RegExp(escapeRegex(words), 'i');
      filter.$or = [{ name: re }, { email: re }, { phone: re }, { taxId: re }];
    }
    const tag = q.tag?.trim();
    if (tag) filter.tags = tag;
    const [docs, total] = await Promise.all([
      this.col.find(filter, { sort: { createdAt: -1, _id: -1 }, ...pageWindow(q) }).toArray(),
      this.col.countDocuments(filter),
    ]);
    return { docs, total };
  }

  /**
   * Claims the e-mail (409 duplicate-email when another customer has it, in any case), then
   * stores the customer; a failed insert gives the claim back.
   */
  /** `_id`: derived from the request's Idempotency-Key, so a retry finds the customer it made (insertOnce). */
  async create(input: CustomerInput, _id = new ObjectId()): Promise<CustomerDoc> {
    const id = _id.toHexString();
    const now = new Date();
    const email = text(input.email);
    const doc: Omit<CustomerDoc, 'tenantId'> = {
      _id,
      name: input.name.trim(),
      ...(email ? { email, emailKey: emailKeyOf(email) } : {}),
      addresses: cleanAddresses(input.addresses),
      tags: cleanTags(input.tags),
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    for (const f of OPTIONAL_TEXT) {
      const v = text(input[f]);
      if (v) doc[f] = v;
    }
    if (doc.emailKey) await this.claims.claim(doc.emailKey, doc.email!, id);
    return recordAround(
      this.tenantDb,
      customerChange('customer.created', id, 1),
      async () => {
        try {
          return (await this.col.insertOnce(doc)) ?? { ...doc, tenantId: this.tenantDb.tenantId };
        } catch (err) {
          if (doc.emailKey) await this.claims.release(doc.emailKey, id);
          throw err;
        }
      },
      customerEvent,
    );
  }

  /**
   * Applies a partial update, guarded by the version it read: a concurrent change makes it read
   * and apply again, so neither write is lost. A new e-mail is claimed before the write; the
   * claims are settled against what the customer holds afterwards, whatever the outcome.
   */
  async update(rawId: string, patch: CustomerPatch): Promise<CustomerDoc> {
    const _id = parseCustomerId(rawId);
    if (!_id) throw customerErrors.notFound(rawId);
    const id = _id.toHexString();
    const touched = new Set<string>();
    try {
      return await untilWritten(
        async () => {
          const current = await this.col.findOne({ _id });
          if (!current) throw customerErrors.notFound(id);
          if (current.redactedAt) throw customerErrors.redacted(id);
          const email = patch.email === undefined ? current.email : text(patch.email);
          const nextKey = email === undefined ? undefined : emailKeyOf(email);
          if (nextKey !== current.emailKey) {
            if (current.emailKey) touched.add(current.emailKey);
            if (nextKey) {
              await this.claims.claim(nextKey, email!, id);
              touched.add(nextKey);
            }
          }
          const update = changes(patch, email);
          // a PATCH that sends what the customer holds is no change: no new version, no event
          if (changesNothing(current, update)) return current;
          try {
            return await recordAround(
              this.tenantDb,
              customerChange('customer.updated', id, current.version + 1),
              async () => {
                const written = await this.col.findOneAndUpdate(
                  { _id, version: current.version, redactedAt: { $exists: false } } as Filter<CustomerDoc>,
                  update,
                  { returnDocument: 'after' },
                );
                if (!written) throw new Changed();
                return written;
              },
              customerEvent,
            );
          } catch (err) {
            // another request is making this very change of version (its event is recorded under
            // the same key), or made one since the read: decide again from what it is now
            if (!(err instanceof Changed) && !isDuplicateKeyError(err)) throw err;
            return undefined;
          }
        },
        () => customerErrors.conflict(id),
      );
    } finally {
      await this.claims.settle(id, touched);
    }
  }

  /**
   * Deletes a customer no order references (409 customer-has-orders otherwise: redact it
   * instead). An order that came to reference it while it was deleted brings it back, so no
   * order is ever left naming a missing customer.
   */
  async delete(rawId: string): Promise<CustomerDoc> {
    return untilWritten(
      async () => {
        const current = await this.require(rawId);
        const id = current._id.toHexString();
        const before = await this.orderCount(id);
        if (before) throw customerErrors.hasOrders(id, before);
        const sequence = current.version + 1;
        try {
          const deleted = await recordAround(
            this.tenantDb,
            customerChange('customer.deleted', id, sequence, { before: presentCustomer(current), sequence }),
            async () => {
              // the version read: a change made meanwhile has its own event, and the deletion is decided again after it
              const deleted = await this.col.findOneAndDelete({ _id: current._id, version: current.version });
              if (!deleted) throw new Changed();
              const after = await this.orderCount(id);
              if (after) {
                const { tenantId: _t, ...restore } = deleted;
                await this.col.insertOne(restore).catch((err) => {
                  if (!isDuplicateKeyError(err)) throw err;
                });
                throw customerErrors.hasOrders(id, after);
              }
              return deleted;
            },
            // announced as it was when deleted; the sequence follows its last version
            (doc) => ({ ...customerEvent(doc), sequence: doc.version + 1 }),
          );
          if (deleted.emailKey) await this.claims.settle(id, [deleted.emailKey]);
          return deleted;
        } catch (err) {
          // changed (or deleted: the next read answers 404) since it was read
          if (!(err instanceof Changed) && !isDuplicateKeyError(err)) throw err;
          return undefined;
        }
      },
      () => customerErrors.conflict(rawId),
    );
  }

  /**
   * Erases the customer's personal data: name becomes REDACTED_NAME, e-mail (its claim released),
   * phone, taxId, addresses and notes go, and `redactedAt` is set; then each of its orders gets
   * its customer fields replaced with placeholders (totals, items and history stay). Idempotent:
   * a repeat changes nothing the first did, and finishes orders an interrupted run left.
   */
  async redact(rawId: string): Promise<CustomerDoc> {
    const _id = parseCustomerId(rawId);
    if (!_id) throw customerErrors.notFound(rawId);
    const id = _id.toHexString();
    return untilWritten(
      async () => {
        const current = await this.col.findOne({ _id });
        if (!current) throw customerErrors.notFound(id);
        if (current.redactedAt) {
          // redacted before (announced then): finish the orders and events an interrupted run left
          await redactOrdersOf(this.tenantDb, id, this.actor);
          await redactKeptEvents(this.tenantDb, id);
          return current;
        }
        try {
          // announced once its orders are redacted too: the event says the customer's data is gone everywhere
          const doc = await recordAround(
            this.tenantDb,
            customerChange('customer.redacted', id, current.version + 1),
            () => this.redactAt(current),
            customerEvent,
          );
          // after the announcement, which it does not hold up (a repeat finishes it if this process dies)
          await redactKeptEvents(this.tenantDb, id);
          return doc;
        } catch (err) {
          if (!(err instanceof Changed) && !isDuplicateKeyError(err)) throw err;
          return undefined;
        }
      },
      () => customerErrors.conflict(id),
    );
  }

  /** Redacts the customer if it is still as read (Changed otherwise), then its orders. */
  private async redactAt(current: CustomerDoc): Promise<CustomerDoc> {
    const { _id } = current;
    const id = _id.toHexString();
    const now = new Date();
    const before = await this.col.findOneAndUpdate(
      { _id, version: current.version, redactedAt: { $exists: false } } as Filter<CustomerDoc>,
      {
        $set: { name: REDACTED_NAME, addresses: [], redactedAt: now, updatedAt: now },
        $unset: Object.fromEntries(REDACTED_MEMBERS.map((m) => [m, ''])),
        $inc: { version: 1 },
      } as UpdateFilter<CustomerDoc>,
      { returnDocument: 'before' },
    );
    if (!before) throw new Changed();
    if (before.emailKey) await this.claims.settle(id, [before.emailKey]);
    // read after the mark: an order linked from now on sees the customer redacted (see Orders.create)
    const doc = await this.col.findOne({ _id });
    if (!doc) throw customerErrors.notFound(id);
    await redactOrdersOf(this.tenantDb, id, this.actor);
    return doc;
  }

  /** One page of the orders that reference the customer, newest first. */
  async orders(id: string, paging: PageRequest): Promise<{ docs: OrderDoc[]; total: number }> {
    const customer = await this.require(id);
    const filter = { customerId: customer._id.toHexString() } as Filter<OrderDoc>;
    const [docs, total] = await Promise.all([
      this.orderCol.find(filter, { sort: { createdAt: -1, _id: -1 }, ...pageWindow(paging) }).toArray(),
      this.orderCol.countDocuments(filter),
    ]);
    return { docs, total };
  }

  /** Everything stored about the customer: the document, and every order referencing it with its comments. */
  async export(id: string): Promise<CustomerExport> {
    const customer = await this.require(id);
    const docs = await this.orderCol
      .find({ customerId: customer._id.toHexString() } as Filter<OrderDoc>, { sort: { createdAt: -1, _id: -1 } })
      .toArray();
    const comments = docs.length
      ? await this.tenantDb
          .collection(orderComments)
          .find({ orderId: { $in: docs.map((o) => o._id.toHexString()) } }, { sort: { timestamp: 1, _id: 1 } })
          .toArray()
      : [];
    return {
      customer,
      orders: docs.map((o) => ({ ...o, comments: comments.filter((c) => c.orderId === o._id.toHexString()) })),
    };
  }

  private orderCount(id: string): Promise<number> {
    return this.orderCol.countDocuments({ customerId: id } as Filter<OrderDoc>);
  }
}

/** The update a patch makes (`email` is the e-mail the customer will hold, already resolved). */
/** Whether `update` (of `changes`) would leave every field of `current` as it is. */
function changesNothing(current: CustomerDoc, update: UpdateFilter<CustomerDoc>): boolean {
  const { updatedAt: _u, ...set } = (update.$set ?? {}) as Record<string, unknown>;
  const held = current as unknown as Record<string, unknown>;
  return (
    Object.entries(set).every(([k, v]) => isDeepStrictEqual(held[k], v)) &&
    Object.keys(update.$unset ?? {}).every((k) => held[k] === undefined)
  );
}

function changes(patch: CustomerPatch, email: string | undefined): UpdateFilter<CustomerDoc> {
  const $set: Record<string, unknown> = { updatedAt: new Date() };
  const $unset: Record<string, ''> = {};
  if (patch.name !== undefined) $set.name = patch.name.trim();
  if (patch.email !== undefined) {
    if (email) Object.assign($set, { email, emailKey: emailKeyOf(email) });
    else Object.assign($unset, { email: '', emailKey: '' });
  }
  for (const f of OPTIONAL_TEXT) {
    if (patch[f] === undefined) continue;
    const v = text(patch[f]);
    if (v) $set[f] = v;
    else $unset[f] = '';
  }
  if (patch.addresses !== undefined) $set.addresses = cleanAddresses(patch.addresses);
  if (patch.tags !== undefined) $set.tags = cleanTags(patch.tags);
  return {
    $set,
    ...(Object.keys($unset).length ? { $unset } : {}),
    $inc: { version: 1 },
  } as UpdateFilter<CustomerDoc>;
}
