import { ObjectId } from 'mongodb';
import type {
  AggregateOptions,
  AnyBulkWriteOperation,
  BulkWriteOptions,
  Collection,
  CountDocumentsOptions,
  Db,
  DeleteOptions,
  Document,
  Filter,
  FindOneAndDeleteOptions,
  FindOneAndUpdateOptions,
  FindOptions,
  InsertOneOptions,
  UpdateFilter,
  UpdateOptions,
  WithId,
} from 'mongodb';
import type { CollectionDef } from './collection';
import { isDuplicateKeyError } from './duplicate-key';

/**
 * The only way code reaches a tenant's data. Every filter, insert, upsert and pipeline gets the
 * tenant's id added here, so a handler or activity cannot forget it, and a document of another
 * tenant is simply not found (which the API answers as 404, like a missing one).
 */
export type TenantDoc = Document & { tenantId: string };
/** What callers insert: the tenantId is added by the layer. */
export type NewDoc<T> = Omit<T, 'tenantId'>;

export class TenantCollection<T extends TenantDoc> {
  constructor(
    private readonly collection: Collection<T>,
    readonly tenantId: string,
  ) {}

  /** The tenant's filter: the caller's conditions plus tenantId, which a caller cannot override. */
  scope(filter: Filter<T> = {}): Filter<T> {
    return { ...filter, tenantId: this.tenantId } as Filter<T>;
  }

  private stamp(doc: NewDoc<T>): T {
    return { ...doc, tenantId: this.tenantId } as unknown as T;
  }

  /** Updates may not move a document to another tenant. */
  private guardUpdate(update: UpdateFilter<T>): UpdateFilter<T> {
    for (const op of ['$set', '$setOnInsert', '$unset', '$rename', '$inc'] as const) {
      const part = (update as Record<string, Record<string, unknown> | undefined>)[op];
      if (part && 'tenantId' in part) throw new Error(`An update may not change tenantId (${op})`);
    }
    return update;
  }

  /**
   * A lookup by `_id` alone asks the database for `{_id}` and checks the tenant here: a filter of
   * exactly `{_id}` is FerretDB's cheapest query (its own primary-key path; anything more goes
   * through our build's filter pushdown), while the result is the same (another tenant's
   * document is still not found).
   */
  async findOne(filter: Filter<T>, options?: FindOptions): Promise<WithId<T> | null> {
    const keys = Object.keys(filter).filter((k) => k !== 'tenantId');
    const id = (filter as { _id?: unknown })._id;
    if (
      keys.length === 1 &&
      keys[0] === '_id' &&
      !options?.projection &&
      (typeof id === 'string' || id instanceof ObjectId)
    ) {
      const doc = (await this.collection.findOne({ _id: id } as Filter<T>, options)) as WithId<T> | null;
      return doc && (doc as TenantDoc).tenantId === this.tenantId ? doc : null;
    }
    return this.collection.findOne(this.scope(filter), options);
  }

  /**
   * Documents by a list of `_id`s, the tenant checked here as findOne does: FerretDB answers
   * `{_id: {$in}}` alone by its primary key (some 80 ms for 500 of 50,000 documents), but with
   * any other condition beside it decodes far more (0.4–1 s).
   */
  async findByIds<I extends string | ObjectId>(ids: I[], options?: FindOptions): Promise<WithId<T>[]> {
    if (!ids.length) return [];
    // the tenant is checked on what comes back: an inclusion projection must keep it
    const projection = options?.projection;
    if (projection && Object.values(projection).some((v) => v === 1 || v === true))
      options = { ...options, projection: { ...projection, tenantId: 1 } };
    const docs = (await this.collection.find({ _id: { $in: ids } } as Filter<T>, options).toArray()) as WithId<T>[];
    return docs.filter((d) => (d as TenantDoc).tenantId === this.tenantId);
  }

  find(filter: Filter<T> = {}, options?: FindOptions) {
    return this.collection.find(this.scope(filter), options);
  }

  countDocuments(filter: Filter<T> = {}, options?: CountDocumentsOptions): Promise<number> {
    return this.collection.countDocuments(this.scope(filter), options);
  }

  distinct(key: string, filter: Filter<T> = {}) {
    return this.collection.distinct(key, this.scope(filter));
  }

  insertOne(doc: NewDoc<T>, options?: InsertOneOptions) {
    return this.collection.insertOne(this.stamp(doc) as Parameters<Collection<T>['insertOne']>[0], options);
  }

  /**
   * Inserts a document whose `_id` a retried request derives again (api/context.ts createdId):
   * the document an earlier attempt inserted under that id, if there is one; null once inserted.
   * Any other refusal is thrown as insertOne throws it.
   */
  async insertOnce(doc: NewDoc<T>): Promise<WithId<T> | null> {
    try {
      await this.insertOne(doc);
      return null;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      const earlier = await this.findOne({ _id: (doc as unknown as { _id: unknown })._id } as Filter<T>);
      if (earlier) return earlier;
      throw err;
    }
  }

  insertMany(docs: NewDoc<T>[], options?: BulkWriteOptions) {
    return this.collection.insertMany(
      docs.map((d) => this.stamp(d)) as unknown as Parameters<Collection<T>['insertMany']>[0],
      options,
    );
  }

  updateOne(filter: Filter<T>, update: UpdateFilter<T>, options?: UpdateOptions) {
    return this.collection.updateOne(this.scope(filter), this.guardUpdate(update), options);
  }

  /**
   * An update of one document found by `_id` alone (see findOne): the tenant is checked on the
   * document first, and since no update can change a document's tenant, writing by `_id` after
   * that check is safe. Answers whether the document was the tenant's and was matched.
   */
  async updateById(id: string | ObjectId, update: UpdateFilter<T>): Promise<boolean> {
    const doc = await this.findOne({ _id: id } as Filter<T>, {});
    if (!doc) return false;
    const res = await this.collection.updateOne({ _id: id } as Filter<T>, this.guardUpdate(update));
    return res.matchedCount === 1;
  }

  /**
   * An update by `_id` alone, without the read updateById makes first, for ids built from the
   * tenant (`<tenantId>:…`): such an id cannot name another tenant's document.
   */
  async updateByTenantKey(id: string, update: UpdateFilter<T>): Promise<boolean> {
    if (!id.startsWith(`${this.tenantId}:`)) throw new Error(`updateByTenantKey needs an id of this tenant, got ${id}`);
    const res = await this.collection.updateOne({ _id: id } as Filter<T>, this.guardUpdate(update));
    return res.matchedCount === 1;
  }

  /** Deletes one document by `_id` alone, after checking its tenant (see updateById). */
  async deleteById(id: string | ObjectId): Promise<boolean> {
    const doc = await this.findOne({ _id: id } as Filter<T>, {});
    if (!doc) return false;
    const res = await this.collection.deleteOne({ _id: id } as Filter<T>);
    return res.deletedCount === 1;
  }

  updateMany(filter: Filter<T>, update: UpdateFilter<T>, options?: UpdateOptions) {
    return this.collection.updateMany(this.scope(filter), this.guardUpdate(update), options);
  }

  findOneAndUpdate(
    filter: Filter<T>,
    update: UpdateFilter<T>,
    options: FindOneAndUpdateOptions = {},
  ): Promise<WithId<T> | null> {
    return this.collection.findOneAndUpdate(this.scope(filter), this.guardUpdate(update), {
      ...options,
      includeResultMetadata: false,
    });
  }

  findOneAndDelete(filter: Filter<T>, options: FindOneAndDeleteOptions = {}): Promise<WithId<T> | null> {
    return this.collection.findOneAndDelete(this.scope(filter), { ...options, includeResultMetadata: false });
  }

  deleteOne(filter: Filter<T>, options?: DeleteOptions) {
    return this.collection.deleteOne(this.scope(filter), options);
  }

  deleteMany(filter: Filter<T>, options?: DeleteOptions) {
    return this.collection.deleteMany(this.scope(filter), options);
  }

  /** Pipelines start with the tenant's $match, so every later stage sees only its documents. */
  aggregate<R extends Document = Document>(pipeline: Document[], options?: AggregateOptions) {
    return this.collection.aggregate<R>([{ $match: { tenantId: this.tenantId } }, ...pipeline], options);
  }

  bulkWrite(operations: AnyBulkWriteOperation<T>[], options?: BulkWriteOptions) {
    return this.collection.bulkWrite(
      operations.map((op) => this.scopeOperation(op)),
      options,
    );
  }

  private scopeOperation(op: AnyBulkWriteOperation<T>): AnyBulkWriteOperation<T> {
    if ('insertOne' in op) return { insertOne: { document: this.stamp(op.insertOne.document as NewDoc<T>) as never } };
    if ('updateOne' in op) {
      return {
        updateOne: {
          ...op.updateOne,
          filter: this.scope(op.updateOne.filter),
          update: this.guardUpdate(op.updateOne.update as UpdateFilter<T>),
        },
      };
    }
    if ('updateMany' in op) {
      return {
        updateMany: {
          ...op.updateMany,
          filter: this.scope(op.updateMany.filter),
          update: this.guardUpdate(op.updateMany.update as UpdateFilter<T>),
        },
      };
    }
    if ('replaceOne' in op) {
      return {
        replaceOne: {
          ...op.replaceOne,
          filter: this.scope(op.replaceOne.filter),
          replacement: { ...op.replaceOne.replacement, tenantId: this.tenantId } as never,
        },
      };
    }
    if ('deleteOne' in op) return { deleteOne: { ...op.deleteOne, filter: this.scope(op.deleteOne.filter) } };
    if ('deleteMany' in op) return { deleteMany: { ...op.deleteMany, filter: this.scope(op.deleteMany.filter) } };
    throw new Error('Unknown bulk operation');
  }
}

/** A tenant's view of the database: `tenantDb.collection(products)` for any tenant-scoped collection. */
export class TenantDb {
  constructor(
    private readonly db: Db,
    readonly tenantId: string,
  ) {
    if (!tenantId) throw new Error('TenantDb needs a tenantId');
  }

  /** The database's name: what tells two TenantDbs of one tenant apart (tests use several databases). */
  get databaseName(): string {
    return this.db.databaseName;
  }

  collection<T extends TenantDoc>(def: CollectionDef<T>): TenantCollection<T> {
    if (def.scope !== 'tenant') throw new Error(`${def.name} is not a tenant-scoped collection`);
    return new TenantCollection<T>(this.db.collection<T>(def.name), this.tenantId);
  }
}

/** System collections (tenants, key hashes): only auth and tenancy code may use this. */
export function systemCollection<T extends Document>(db: Db, def: CollectionDef<T>): Collection<T> {
  if (def.scope !== 'system') throw new Error(`${def.name} is tenant-scoped; use TenantDb`);
  return db.collection<T>(def.name);
}
