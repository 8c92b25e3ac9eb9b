import { ObjectId, type Filter } from 'mongodb';
import { duplicateKeyIndexes, isDuplicateKeyError } from '../db/duplicate-key';
import type { TenantDb } from '../db/tenant-db';
import { AppError, type FieldError } from '../errors/catalog';
import { claimId, productSkus, products, type SkuClaim, type SkuKind } from './collections';
import { materials, supplies } from '../materials/collections';
import { findUnit, unitCodes } from '../materials/quantity';
import { holdNamed, stockRecordsBySku, unitsOf } from '../materials/lookup';
import { stockLevels } from '../inventory/collections';
import { isCalculatedBundle, productsHoldingSkus } from '../inventory/stock-view';
import { normalizeProduct, skusOf } from './normalize';
import { presentProduct } from './present';
import { recordAround, type AroundChange, type EventData } from '../webhooks/events';
import { crossFieldErrors, productRuleErrors, validateProductInput, validationError } from './rules';
import { contentOf } from './content';
import { withSearch } from './search';
import { holdComponents, markLeaving } from './sku-marks';
import type { ProductDoc, ProductInput } from './types';

/** A claim older than this whose product does not exist is left over from a crashed write. */
const ORPHAN_AFTER_MS = 5 * 60_000;

export function notFound(what: string): AppError {
  return new AppError(404, 'not-found', `No product ${what}`);
}

export function parseProductId(id: string): ObjectId | null {
  return /^[0-9a-f]{24}$/i.test(id) ? new ObjectId(id) : null;
}

/** A product's webhook event: the product as GET /products/{id} presents it, its version as sequence. */
function productEvent(doc: ProductDoc): EventData {
  return { id: doc._id.toHexString(), sequence: doc.version, resource: presentProduct(doc) };
}

/** The event of the change that takes a product to `version`: one per change, since every write adds one. */
function productChange(type: string, id: string, version: number, deletion?: AroundChange['deletion']): AroundChange {
  return {
    type,
    key: `product:${id}:v${version}`,
    kind: 'product',
    id,
    sequence: version,
    ...(deletion ? { deletion } : {}),
  };
}

function concurrentChange(id: string): AppError {
  return new AppError(
    409,
    'conflict',
    `Product ${id} was changed by another request while this one was applied; read it again and retry`,
  );
}

/**
 * A read shows a variant without a minAlertStock of its own with the one it inherits (the
 * product's, else 5). Sent back unchanged by a read-modify-write, that shown value is not a
 * setting: the variant keeps inheriting, so changing the product's minAlertStock in the same
 * write still reaches it. (To pin the variant at that number, send it once the product has
 * another.)
 */
function keepInherited(current: ProductDoc, product: ProductInput): ProductInput {
  const shown = current.minAlertStock ?? 5;
  // a variant is the one its id names (the write may also correct its SKU), else the one of its SKU
  const byId = new Map(current.variants.map((v) => [v.id, v]));
  const bySku = new Map(current.variants.map((v) => [v.sku, v]));
  const inheriting = (v: ProductInput['variants'][number]) => {
    const was = (v.id !== undefined ? byId.get(v.id) : undefined) ?? bySku.get(v.sku);
    return was !== undefined && was.minAlertStock == null;
  };
  return {
    ...product,
    variants: product.variants.map((v) =>
      v.minAlertStock === shown && inheriting(v) ? { ...v, minAlertStock: null } : v,
    ),
  };
}

/**
 * The bindings a rollback puts back: the ones the product had before the change it undoes, except
 * that a binding a publication wrote since (a publication records bindings without a new version,
 * so `current.updatedAt` is still the change's time) says what that channel holds now, and stays.
 */
function restoredBindings(before: ProductDoc, current: ProductDoc): ProductDoc['bindings'] {
  const since = current.updatedAt.getTime();
  const publishedSince = new Map(
    (current.bindings ?? [])
      .filter((b) => {
        const synced = (b as { lastSyncedAt?: unknown }).lastSyncedAt;
        return synced != null && new Date(synced as string | Date).getTime() > since;
      })
      .map((b) => [b.channelId, b]),
  );
  const restored = (before.bindings ?? []).map((b) => publishedSince.get(b.channelId) ?? b);
  const kept = new Set(restored.map((b) => b.channelId));
  return [...restored, ...[...publishedSince.values()].filter((b) => !kept.has(b.channelId))];
}

/** Whether a write keeps a bundle's components as they are (nothing to check again). */
function sameComponents(current: ProductDoc, product: ProductInput): boolean {
  const skus = (p: { bundleConfig?: { components: { productSku: string }[] } }) =>
    (p.bundleConfig?.components ?? []).map((c) => c.productSku).join('\n');
  return current.productType === 'bundle' && skus(current) === skus(product);
}

/**
 * Product writes for one tenant: validation, normalisation, the SKU space and guarded updates.
 * Used by the API and by import activities alike, so every path into the catalog keeps its rules.
 */
export class Catalog {
  /** Releases of the materials and supplies this catalog's preparations hold (holdNamed). */
  private readonly holds: (() => Promise<void>)[] = [];

  constructor(private readonly tenantDb: TenantDb) {}

  private get products() {
    return this.tenantDb.collection(products);
  }
  private get skus() {
    return this.tenantDb.collection(productSkus);
  }

  async get(id: string): Promise<ProductDoc | null> {
    const _id = parseProductId(id);
    return _id ? this.products.findOne({ _id }) : null;
  }

  /** The product or variant a SKU of the catalog belongs to; null for a SKU nobody or a material or supply holds. */
  async skuOwner(sku: string): Promise<SkuClaim | null> {
    const claim = await this.skuHolder(sku);
    return claim && (claim.kind === 'product' || claim.kind === 'variant') ? claim : null;
  }

  /** Whoever holds a SKU in the tenant's one SKU space: a product, a variant, a material or a supply. */
  async skuHolder(sku: string): Promise<SkuClaim | null> {
    return this.skus.findOne({ _id: claimId(this.tenantDb.tenantId, sku) });
  }

  /**
   * Takes a SKU for a material or supply record (`ownerId` its `_id`): a 409 duplicate-sku naming
   * the holder when a product, variant or other record has it. Run again by the same owner, it holds.
   */
  async claimFor(sku: string, kind: 'material' | 'supply', ownerId: string): Promise<void> {
    await this.claim([{ sku, kind }], ownerId);
  }

  /** Gives back SKUs a material or supply record held. */
  async releaseFor(ownerId: string, skus: string[]): Promise<void> {
    await this.release(ownerId, skus);
  }

  /** Validates a body from outside the API (a CSV row) as a product: schema, then prepareInput. Throws a 400. */
  async prepare(body: unknown, stored?: ProductDoc): Promise<ProductInput> {
    return this.prepareInput(validateProductInput(body), stored);
  }

  /**
   * A product of the schema's shape as it is stored, after the rules a schema cannot express:
   * storable keys and text, the rules between fields, bundle components that are SKUs of the
   * tenant. Throws a 400.
   */
  async prepareInput(input: ProductInput, stored?: ProductDoc): Promise<ProductInput> {
    const errs = notAlreadyStored(productRuleErrors(input), stored);
    if (errs.length) throw validationError(errs);
    const product = normalizeProduct(input);
    // every writer that has the stored product (flows, AI, CSV updates) checks it here; the
    // single-product write checks it again under its marks (write)
    if (stored) await this.refuseBecomingNested(stored, product);
    const components = [...new Set((product.bundleConfig?.components ?? []).map((c) => c.productSku))];
    if (components.length) {
      // held against a delete or a rename while this write goes on (sku-marks.ts)
      const hold = await holdComponents(this.tenantDb, components);
      this.holds.push(hold.release);
      const missing = new Set(hold.missing);
      const leaving = new Set(hold.leaving);
      const errs = product.bundleConfig!.components.flatMap((c, i) => {
        const field = `bundleConfig.components.${i}.productSku`;
        if (missing.has(c.productSku))
          return [{ field, message: `references no product or variant SKU of the tenant (${c.productSku})` }];
        if (leaving.has(c.productSku))
          return [
            {
              field,
              message: `references ${c.productSku}, which is being deleted, renamed or made a calculated bundle`,
            },
          ];
        return [];
      });
      errs.push(...(await this.nestedBundleErrors(product)));
      if (errs.length) {
        await this.releaseHolds(); // refused: nothing will be stored
        throw validationError(errs);
      }
    }
    const bomErrors = await this.billOfMaterialsErrors(product);
    if (bomErrors.length) {
      await this.releaseHolds(); // refused: nothing will be stored
      throw validationError(bomErrors);
    }
    return product;
  }

  /**
   * A calculated bundle has no stock of its own: an order of it sells its components. One inside a
   * bundle would be sold as if it held stock, so a component is never one (name its components, or
   * make it reserved); see refuseBecomingNested for the other way round.
   */
  private async nestedBundleErrors(product: ProductInput): Promise<FieldError[]> {
    const skus = product.bundleConfig!.components.map((c) => c.productSku);
    // by primary key: a scan of the bundles per bundle write grows with the catalog
    const held = await productsHoldingSkus(this.tenantDb, skus);
    const calculated = new Set(held.filter((h) => isCalculatedBundle(h.product)).map((h) => h.sku));
    return product.bundleConfig!.components.flatMap((c, i) =>
      calculated.has(c.productSku)
        ? [
            {
              field: `bundleConfig.components.${i}.productSku`,
              message: `is a calculated bundle (${c.productSku}), which holds no stock of its own: name its components here, or make it a reserved bundle`,
            },
          ]
        : [],
    );
  }

  /**
   * A product becoming a calculated bundle while a bundle names one of its SKUs would be a
   * calculated bundle inside a bundle (nestedBundleErrors): 400 validation-error naming the bundles.
   */
  private async refuseBecomingNested(current: ProductDoc, product: ProductInput): Promise<void> {
    if (!isCalculatedBundle(product) || isCalculatedBundle(current)) return;
    const skus = skusOf(product).map((s) => s.sku);
    const bundles = await this.products
      .find({ _id: { $ne: current._id }, 'bundleConfig.components.productSku': { $in: skus } } as Filter<ProductDoc>, {
        projection: { sku: 1 },
        limit: 10,
      })
      .toArray();
    if (bundles.length)
      throw new AppError(
        400,
        'validation-error',
        `${product.sku} is a component of the bundle${bundles.length === 1 ? '' : 's'} ${bundles.map((b) => b.sku).join(', ')}: it cannot become a calculated bundle (it would be sold as if it held stock); keep it reserved, or remove it there first`,
        {
          field: 'bundleConfig.inventoryMode',
          details: { reason: 'in-use', usedBy: bundles.map((b) => ({ sku: b.sku, as: 'bundle' })) },
        },
      );
  }

  /**
   * A bill of materials consumes materials and supplies of the tenant: every component and every
   * substitute names one (never this product or its variants), a component's unit is that
   * record's base unit or one of its alternative units (any case), a material is named once among
   * the components (one component carries its whole quantity, so a consumption takes it once) and
   * a substitute is neither its component's own material nor named twice for it.
   */
  private async billOfMaterialsErrors(product: ProductInput): Promise<FieldError[]> {
    const bom = (product.billOfMaterials as
      { components: { materialSku: string; unit: string; substitutes?: { materialSku: string }[] }[] } | undefined) ?? {
      components: [],
    };
    const consumed = (product.modifiersConfig?.groups ?? []).flatMap((g, i) =>
      g.modifiers.flatMap((m, j) =>
        (m.inventoryConsumption as { sku: string; unit: string }[]).map((c, k) => ({
          ...c,
          at: `modifiersConfig.groups.${i}.modifiers.${j}.inventoryConsumption.${k}`,
        })),
      ),
    );
    if (!bom.components.length && !consumed.length) return [];
    const wanted = [
      ...new Set([
        ...bom.components.flatMap((c) => [c.materialSku, ...(c.substitutes ?? []).map((s) => s.materialSku)]),
        ...consumed.map((c) => c.sku),
      ]),
    ];
    const records = await stockRecordsBySku(this.tenantDb, wanted);
    // held against a delete while this write goes on; one being deleted is not there to name
    const hold = await holdNamed(this.tenantDb, [...records.values()]);
    this.holds.push(hold.release);
    const deleting = new Set(hold.deleting);
    const unitsBySku = new Map(
      wanted.map((sku) => [sku, records.get(sku) && !deleting.has(sku) ? unitsOf(records.get(sku)!) : null]),
    );
    const own = new Map(skusOf(product).map((s) => [s.sku.toUpperCase(), s.kind]));
    const unknown = (sku: string) =>
      own.get(sku) === 'product'
        ? `is this product's own SKU (${sku}): a component must be a material or supply of the tenant`
        : own.get(sku) === 'variant'
          ? `is the SKU of this product's variant ${sku}: a component must be a material or supply of the tenant`
          : deleting.has(sku)
            ? `references ${sku}, which is being deleted`
            : `references no material or supply of the tenant (${sku})`;
    const errs: FieldError[] = [];
    const firstAt = new Map<string, number>();
    bom.components.forEach((c, i) => {
      const at = `billOfMaterials.components.${i}`;
      const units = unitsBySku.get(c.materialSku);
      if (!units) errs.push({ field: `${at}.materialSku`, message: unknown(c.materialSku) });
      else if (!findUnit(units, c.unit))
        errs.push({
          field: `${at}.unit`,
          message: `unit ${c.unit} is not a unit of ${c.materialSku} (known units: ${unitCodes(units).join(', ')})`,
        });
      const first = firstAt.get(c.materialSku);
      if (first !== undefined)
        errs.push({
          field: `${at}.materialSku`,
          message: `names ${c.materialSku} again (component ${first}): a material is one component, with the whole quantity`,
        });
      else firstAt.set(c.materialSku, i);
      const subs = new Set<string>();
      (c.substitutes ?? []).forEach((s, k) => {
        const field = `${at}.substitutes.${k}.materialSku`;
        if (!unitsBySku.get(s.materialSku)) errs.push({ field, message: unknown(s.materialSku) });
        else if (s.materialSku === c.materialSku)
          errs.push({ field, message: `is the component's own material (${s.materialSku}), not a substitute` });
        else if (subs.has(s.materialSku))
          errs.push({ field, message: `names ${s.materialSku} twice among this component's substitutes` });
        subs.add(s.materialSku);
      });
    });
    // a modifier's consumption names a material or supply in one of its units, as a component does
    for (const c of consumed) {
      const units = unitsBySku.get(c.sku);
      if (!units) errs.push({ field: `${c.at}.sku`, message: unknown(c.sku) });
      else if (!findUnit(units, c.unit))
        errs.push({
          field: `${c.at}.unit`,
          message: `unit ${c.unit} is not a unit of ${c.sku} (known units: ${unitCodes(units).join(', ')})`,
        });
    }
    return errs;
  }

  /*
   * The single-product writes of the API (create, replace, update, delete) are announced by webhook
   * events (product.created / updated / deleted); the writes of bulk jobs (insert, insertMany,
   * write, restore, deleteAt: imports, edits, flows, AI transforms, rollbacks) are not: a job
   * announces itself once, by job.* and bulk_operation.rolled_back, never once per product.
   */

  /**
   * Creates a product from an input of the schema's shape (the API validated it with
   * productInputSchema). `_id`: derived from the request's Idempotency-Key, so a retry of a
   * request that died finds the product it made (insert answers it).
   */
  async create(input: ProductInput, _id = new ObjectId()): Promise<ProductDoc> {
    try {
      const product = await this.prepareInput(input);
      const id = _id.toHexString();
      return await recordAround(
        this.tenantDb,
        productChange('product.created', id, 1),
        () => this.insert(product, _id),
        productEvent,
      );
    } finally {
      await this.releaseHolds();
    }
  }

  /**
   * Lets go of the materials and supplies this catalog's preparations held against a delete
   * (holdNamed): called once a single write has landed or failed. A bulk write's holds expire.
   */
  async releaseHolds(): Promise<void> {
    const holds = this.holds.splice(0);
    await Promise.all(holds.map((release) => release()));
  }

  /**
   * Stores a prepared product under `_id`. Run again with the same id (a retried import batch),
   * it finds its SKUs already claimed by that id and the product already there, and answers it.
   */
  async insert(product: ProductInput, _id: ObjectId): Promise<ProductDoc> {
    await this.claim(skusOf(product), _id.toHexString());
    const now = new Date();
    const doc: Omit<ProductDoc, 'tenantId'> = {
      ...withSearch(product),
      _id,
      createdAt: now,
      updatedAt: now,
      version: 1,
    };
    try {
      await this.products.insertOne(doc);
    } catch (err) {
      if (isDuplicateKeyError(err)) {
        const existing = await this.products.findOne({ _id });
        if (existing && existing.sku === product.sku) return existing;
      }
      await this.release(
        _id.toHexString(),
        skusOf(product).map((s) => s.sku),
      );
      if (isDuplicateKeyError(err)) throw duplicate(product.sku, 'product');
      throw err;
    }
    return { ...doc, tenantId: this.tenantDb.tenantId } as ProductDoc;
  }

  /**
   * Stores many prepared products (an import batch) with one unordered insert of all their SKU
   * claims and one of the products. A product whose claim or insert did not go through is then
   * stored alone by `insert`, which tells a SKU taken by someone else (an error for that
   * product) from one this batch already claimed in an earlier attempt.
   */
  async insertMany(entries: { product: ProductInput; _id: ObjectId }[]): Promise<(ProductDoc | AppError)[]> {
    const now = new Date();
    const claims = entries.flatMap((e, entry) =>
      skusOf(e.product).map((s) => ({
        entry,
        doc: {
          _id: claimId(this.tenantDb.tenantId, s.sku),
          sku: s.sku,
          kind: s.kind,
          productId: e._id.toHexString(),
          createdAt: now,
        },
      })),
    );
    const alone = new Set<number>();
    await this.skus
      .insertMany(
        claims.map((c) => c.doc),
        { ordered: false },
      )
      .catch((err) => {
        const failed = duplicateKeyIndexes(err);
        if (!failed) throw err;
        for (const i of failed) alone.add(claims[i].entry);
      });
    const batch = entries
      .map((e, i) => ({ i, doc: { ...withSearch(e.product), _id: e._id, createdAt: now, updatedAt: now, version: 1 } }))
      .filter((b) => !alone.has(b.i));
    if (batch.length) {
      await this.products
        .insertMany(
          batch.map((b) => b.doc),
          { ordered: false },
        )
        .catch((err) => {
          const failed = duplicateKeyIndexes(err);
          if (!failed) throw err;
          for (const i of failed) alone.add(batch[i].i);
        });
    }
    const results: (ProductDoc | AppError)[] = [];
    for (const b of batch)
      if (!alone.has(b.i)) results[b.i] = { ...b.doc, tenantId: this.tenantDb.tenantId } as ProductDoc;
    for (const i of [...alone].sort((a, b) => a - b)) {
      try {
        results[i] = await this.insert(entries[i].product, entries[i]._id);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        results[i] = err;
      }
    }
    return results;
  }

  /** Full update: the input (of the schema's shape) replaces the product; SKUs it no longer uses are released. */
  async replace(id: string, input: ProductInput): Promise<ProductDoc> {
    const current = await this.get(id);
    if (!current) throw notFound(id);
    return this.update(current, keepInherited(current, await this.prepareInput(input, current)));
  }

  /**
   * `write`, announced as product.updated: for a single product changed through the API (its own
   * route, its bill of materials, its modifiers). 409 conflict when another write of the same
   * version is under way (its event holds that version's key) or landed first.
   */
  async update(current: ProductDoc, product: ProductInput): Promise<ProductDoc> {
    const id = current._id.toHexString();
    try {
      return await recordAround(
        this.tenantDb,
        productChange('product.updated', id, current.version + 1),
        () => this.write(current, product),
        productEvent,
      );
    } catch (err) {
      if (isDuplicateKeyError(err)) throw concurrentChange(id);
      throw err;
    } finally {
      await this.releaseHolds();
    }
  }

  /**
   * Writes a prepared product over `current`, guarded by the version `current` was read at: a
   * concurrent change in between makes this a 409, never a silent overwrite.
   */
  async write(current: ProductDoc, product: ProductInput): Promise<ProductDoc> {
    // every writer's bundle, a rollback's before-image too (prepareInput checked the API's already)
    if (product.bundleConfig?.components.length && !sameComponents(current, product)) {
      const nested = await this.nestedBundleErrors(product);
      if (nested.length) throw validationError(nested);
    }
    const kept = new Set(skusOf(product).map((s) => s.sku));
    const givenUp = skusOf(current)
      .map((s) => s.sku)
      .filter((sku) => !kept.has(sku));
    // Marked before looking for bundles that name them (sku-marks.ts). Becoming a calculated
    // bundle is giving up being a component, so every SKU it keeps is marked too: a bundle write
    // naming one at the same moment is refused by the mark or refuses this write, never both pass.
    const becoming = isCalculatedBundle(product) && !isCalculatedBundle(current);
    const marked = becoming ? skusOf(current).map((s) => s.sku) : givenUp;
    const unmark = await markLeaving(this.tenantDb, current._id.toHexString(), marked);
    try {
      await this.refuseBecomingNested(current, product);
      const written = await this.writeGivingUp(current, product, givenUp);
      if (becoming) await unmark();
      return written;
    } catch (err) {
      await unmark();
      throw err;
    }
  }

  private async writeGivingUp(current: ProductDoc, product: ProductInput, givenUp: string[]): Promise<ProductDoc> {
    const id = current._id.toHexString();
    const productId = id;
    const before = new Set(skusOf(current).map((s) => s.sku));
    const after = skusOf(product);
    const added = after.filter((s) => !before.has(s.sku));
    const field = givenUp.includes(current.sku) ? 'sku' : 'variants';
    await this.refuseIfBundled(current, givenUp, field);
    await this.refuseIfStocked(current, givenUp, field);
    await this.claim(added, productId);

    const updatedAt = new Date();
    const replacement = {
      ...withSearch(product),
      createdAt: current.createdAt,
      updatedAt,
      version: current.version + 1,
    };
    const unset = unsetOf(current, replacement);
    let written: ProductDoc | null;
    try {
      written = await this.products.findOneAndUpdate(
        { _id: current._id, version: current.version },
        { $set: replacement as Partial<ProductDoc>, ...(Object.keys(unset).length ? { $unset: unset } : {}) },
        { returnDocument: 'after' },
      );
    } catch (err) {
      await this.releaseUnheld(current._id, added);
      if (isDuplicateKeyError(err)) throw duplicate(product.sku, 'product');
      throw err;
    }
    if (!written) {
      await this.releaseUnheld(current._id, added);
      throw concurrentChange(id);
    }
    // A concurrent write of this product that lost may have given back a claim this one found
    // already its own (releaseUnheld read the product before this write landed): take it again.
    if (added.length) {
      const held = await this.skus.findByIds(added.map((s) => claimId(this.tenantDb.tenantId, s.sku)));
      const lost = added.filter((s) => !held.some((c) => c.sku === s.sku));
      if (lost.length) await this.claim(lost, productId);
    }
    // a claim's kind follows the SKU's role (a variant SKU may become the product's): only once the write held
    for (const s of after.filter((s) => before.has(s.sku)))
      await this.skus.updateOne({ sku: s.sku, productId }, { $set: { kind: s.kind } });
    const keep = new Set(after.map((s) => s.sku));
    await this.release(
      productId,
      [...before].filter((s) => !keep.has(s)),
    );
    return written;
  }

  /**
   * Puts a product back as it was (a rollback), if it is still at `expectedVersion`, keeping its
   * current channel bindings. Answers false when someone changed it since.
   */
  async restore(before: ProductDoc, expectedVersion: number): Promise<boolean> {
    const {
      _id,
      tenantId: _t,
      version: _v,
      createdAt,
      updatedAt: _u,
      search: _s,
      lastEditBy: _e,
      editedBy: _b,
      ...input
    } = before;
    const current = await this.products.findOne({ _id });
    if (!current || current.version !== expectedVersion) return false;
    await this.write(current, { ...input, bindings: restoredBindings(before, current) } as ProductInput);
    return true;
  }

  /** Deletes a product only if it is still at `expectedVersion`. */
  async deleteAt(id: string, expectedVersion: number): Promise<boolean> {
    const _id = parseProductId(id);
    const deleted = _id ? await this.products.findOneAndDelete({ _id, version: expectedVersion }) : null;
    if (!deleted) return false;
    await this.skus.deleteMany({ productId: deleted._id.toHexString() });
    return true;
  }

  /**
   * A product whose SKUs (its own, its variants') hold stock somewhere is not deleted, nor gives
   * one of them up by a write (a rename, a dropped variant): the stock would stay with no SKU any inventory write could name, so it could never be cleared, nor its
   * location deleted, and a product given the SKU later would inherit it. 400 validation-error
   * naming where it is (`details.reason` has-stock), as for a material.
   */
  private async refuseIfStocked(current: ProductDoc, skus: string[], field: string): Promise<void> {
    if (!skus.length) return;
    const held = await this.tenantDb
      .collection(stockLevels)
      .find({ sku: { $in: skus }, onHand: { $ne: 0 } } as never, {
        projection: { sku: 1, locationId: 1, onHand: 1 },
        limit: 10,
      })
      .toArray();
    if (!held.length) return;
    throw new AppError(
      400,
      'validation-error',
      `Product ${current.sku} still has stock (${held.map((l) => `${l.sku}: ${l.onHand} at ${l.locationId}`).join(', ')}); set it to zero first (PUT /inventory/location/{locationId}/product/{sku})`,
      {
        field,
        details: {
          reason: 'has-stock',
          stock: held.map((l) => ({ sku: l.sku, locationId: l.locationId, onHand: l.onHand })),
        },
      },
    );
  }

  /**
   * A bundle naming one of `skus` (the product's own or a variant's, given up by a delete or a
   * write) would be left with a component no write of that bundle could keep, or, once the SKU is
   * taken again, with another product in it: 400 validation-error naming the bundles.
   */
  private async refuseIfBundled(current: ProductDoc, skus: string[], field: string): Promise<void> {
    if (!skus.length) return;
    const bundles = await this.products
      .find({ _id: { $ne: current._id }, 'bundleConfig.components.productSku': { $in: skus } } as Filter<ProductDoc>, {
        projection: { sku: 1, 'bundleConfig.components.productSku': 1 },
        limit: 10,
      })
      .toArray();
    if (!bundles.length) return;
    const named = [
      ...new Set(bundles.flatMap((b) => b.bundleConfig?.components.map((c) => c.productSku) ?? [])),
    ].filter((sku) => skus.includes(sku));
    throw new AppError(
      400,
      'validation-error',
      `${named.join(', ')} ${named.length === 1 ? 'is a component' : 'are components'} of the bundle${bundles.length === 1 ? '' : 's'} ${bundles.map((b) => b.sku).join(', ')}: remove ${named.length === 1 ? 'it' : 'them'} there first`,
      { field, details: { reason: 'in-use', usedBy: bundles.map((b) => ({ sku: b.sku, as: 'bundle' })) } },
    );
  }

  /** Deletes a product (announced as product.deleted, with the product as it was). */
  async delete(id: string): Promise<ProductDoc> {
    const current = await this.get(id);
    if (!current) throw notFound(id);
    const productId = current._id.toHexString();
    const unmark = await markLeaving(
      this.tenantDb,
      productId,
      skusOf(current).map((s) => s.sku),
    );
    try {
      return await this.deleteUnbundled(current, id);
    } catch (err) {
      await unmark();
      throw err;
    }
  }

  private async deleteUnbundled(current: ProductDoc, id: string): Promise<ProductDoc> {
    const productId = current._id.toHexString();
    await this.refuseIfBundled(
      current,
      skusOf(current).map((s) => s.sku),
      'id',
    );
    await this.refuseIfStocked(
      current,
      skusOf(current).map((s) => s.sku),
      'id',
    );
    const sequence = current.version + 1;
    let deleted: ProductDoc;
    try {
      deleted = await recordAround(
        this.tenantDb,
        productChange('product.deleted', productId, sequence, { before: presentProduct(current), sequence }),
        async () => {
          // as read: a change in between would make the event announce a product that never was
          const doc = await this.products.findOneAndDelete({ _id: current._id, version: current.version });
          if (!doc) throw (await this.get(productId)) ? concurrentChange(productId) : notFound(id);
          return doc;
        },
        (doc) => ({ ...productEvent(doc), sequence }),
      );
    } catch (err) {
      if (isDuplicateKeyError(err)) throw concurrentChange(productId);
      throw err;
    }
    await this.skus.deleteMany({ productId });
    return deleted;
  }

  /**
   * Takes SKUs for a product. The unique index decides between concurrent writers; on a
   * collision the SKUs taken so far are given back and the answer names the SKU and its holder.
   */
  private async claim(wanted: { sku: string; kind: SkuKind; field?: string }[], productId: string): Promise<void> {
    const taken: string[] = [];
    for (const { sku, kind, field } of wanted) {
      for (let attempt = 0; ; attempt++) {
        try {
          await this.skus.insertOne({
            _id: claimId(this.tenantDb.tenantId, sku),
            sku,
            kind,
            productId,
            createdAt: new Date(),
          });
          taken.push(sku);
          break;
        } catch (err) {
          if (!isDuplicateKeyError(err)) {
            await this.release(productId, taken);
            throw err;
          }
          const holder = await this.skuHolder(sku);
          // ours already (a retried write); a material and a supply of one SKU share an owner id, not a kind
          if (holder?.productId === productId && sameHolder(holder.kind, kind)) break;
          if (holder && attempt === 0 && (await this.isOrphan(holder))) {
            await this.skus.deleteOne({ sku, productId: holder.productId });
            continue;
          }
          await this.release(productId, taken);
          throw duplicate(sku, holder?.kind ?? 'product', holder?.productId, field);
        }
      }
    }
  }

  private async isOrphan(claim: SkuClaim): Promise<boolean> {
    if (Date.now() - claim.createdAt.getTime() < ORPHAN_AFTER_MS) return false;
    if (claim.kind === 'material' || claim.kind === 'supply') {
      const held =
        claim.kind === 'material'
          ? await this.tenantDb.collection(materials).findOne({ _id: claim.productId })
          : await this.tenantDb.collection(supplies).findOne({ _id: claim.productId });
      return !held;
    }
    const _id = parseProductId(claim.productId);
    const holder = _id && (await this.products.findOne({ _id }, { projection: { sku: 1, 'variants.sku': 1 } }));
    // a product that no longer holds the SKU (a write that claimed it and then lost or died)
    return !holder || (holder.sku !== claim.sku && !holder.variants.some((v) => v.sku === claim.sku));
  }

  /**
   * Gives back the claims of a write that did not land, except SKUs the product holds as stored
   * now: concurrent writes of one product share its claims, and the one that landed keeps them.
   */
  private async releaseUnheld(_id: ObjectId, wanted: { sku: string }[]): Promise<void> {
    if (!wanted.length) return;
    const now = await this.products.findOne({ _id }, { projection: { sku: 1, 'variants.sku': 1 } });
    const held = new Set(now ? [now.sku, ...now.variants.map((v) => v.sku)] : []);
    await this.release(
      _id.toHexString(),
      wanted.map((s) => s.sku).filter((sku) => !held.has(sku)),
    );
  }

  private async release(productId: string, skus: string[]): Promise<void> {
    if (skus.length) await this.skus.deleteMany({ productId, sku: { $in: skus } });
  }
}

/** Whether a claim of `held` kind is one a writer of `wanted` kind may find as its own (a product's SKU may have been a variant's). */
function sameHolder(held: SkuKind, wanted: SkuKind): boolean {
  const catalog = (k: SkuKind) => k === 'product' || k === 'variant';
  return held === wanted || (catalog(held) && catalog(wanted));
}

const HOLDER_NAMES: Record<SkuKind, string> = {
  product: 'a product',
  variant: 'a variant',
  material: 'a material',
  supply: 'a supply',
};

/**
 * A write is refused for what it brings, not for what the product already holds: a rule added
 * later (a blank title, repeated ids or components, an impossible date) must not lock a product
 * stored before it out of every other change (a flow setting its price, a BOM, a CSV update). An
 * error between fields that the stored product has too, same field and message, is left alone.
 */
function notAlreadyStored(errs: FieldError[], stored?: ProductDoc): FieldError[] {
  if (!stored || !errs.length) return errs;
  const key = (e: FieldError) => `${e.field}\n${e.message}`;
  const had = new Set(crossFieldErrors(contentOf(stored) as unknown as ProductInput).map(key));
  return errs.filter((e) => !had.has(key(e)));
}

/** 409 duplicate-sku: `field` is where the request holds the SKU (`variants.<i>.sku` for a variant's). */
export function duplicate(sku: string, kind: SkuKind, productId?: string, field = 'sku'): AppError {
  return new AppError(409, 'duplicate-sku', `SKU ${sku} is already used by ${HOLDER_NAMES[kind]} of this tenant`, {
    field,
    details: {
      sku,
      collidesWith: kind,
      ...(productId && (kind === 'product' || kind === 'variant') ? { productId } : {}),
    },
  });
}

/** Top-level fields the old document has and the replacement drops (a full update removes them). */
function unsetOf(current: object, replacement: object): Record<string, ''> {
  const unset: Record<string, ''> = {};
  for (const key of Object.keys(current))
    // editedBy outlives every write (edit-marks.ts)
    if (!(key in replacement) && key !== 'tenantId' && key !== '_id' && key !== 'editedBy') unset[key] = '';
  return unset;
}
