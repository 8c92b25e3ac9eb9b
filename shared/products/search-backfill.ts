import type { Db } from 'mongodb';
import { defineCollection } from '../db/collection';
import { products } from './collections';
import { searchTextOf } from './search';
import type { ProductDoc } from './types';

/** Which one-off upgrades of stored data have been done (one document each). */
interface DataUpgrade {
  _id: string;
  doneAt: Date;
  count: number;
}

export const dataUpgrades = defineCollection<DataUpgrade>({
  name: 'data_upgrades',
  scope: 'system',
  indexes: [],
});

const UPGRADE = 'products-search-field';
const BATCH = 500;

/**
 * Gives every product stored before the `search` field (search.ts) its search text, once per
 * database: a product without it is invisible to search. The worker runs it at start; a mark in
 * `data_upgrades` makes every later start one read. Each write is guarded by the field's absence,
 * so a product written meanwhile (which sets the field itself) is left alone, and two workers
 * running it at once write nothing twice. It reads across tenants directly, as the outbox relay
 * does: it touches no tenant's data but the one derived field.
 */
export async function backfillProductSearch(db: Db): Promise<number | null> {
  const marks = db.collection<DataUpgrade>(dataUpgrades.name);
  if (await marks.findOne({ _id: UPGRADE })) return null;
  const raw = db.collection<ProductDoc>(products.name);
  const write = async (batch: ProductDoc[]): Promise<number> => {
    const res = await raw.bulkWrite(
      batch.map((p) => ({
        updateOne: {
          filter: { _id: p._id, search: { $exists: false } },
          update: { $set: { search: searchTextOf(p) } },
        },
      })),
      { ordered: false },
    );
    return res.modifiedCount;
  };
  // one pass over one cursor: a query per batch would scan the collection again each time
  let count = 0;
  let batch: ProductDoc[] = [];
  const projection = { sku: 1, variants: 1, title: 1, brand: 1, tags: 1 };
  for await (const p of raw.find({ search: { $exists: false } }, { projection, batchSize: BATCH })) {
    batch.push(p);
    if (batch.length === BATCH) {
      count += await write(batch);
      batch = [];
    }
  }
  if (batch.length) count += await write(batch);
  await marks.updateOne({ _id: UPGRADE }, { $setOnInsert: { doneAt: new Date(), count } }, { upsert: true });
  return count;
}
