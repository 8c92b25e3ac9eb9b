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
  let count = 0;
  for (;;) {
    const batch = await raw.find({ search: { $exists: false } }, { limit: BATCH }).toArray();
    if (!batch.length) break;
    const res = await raw.bulkWrite(
      batch.map((p) => ({
        updateOne: {
          filter: { _id: p._id, search: { $exists: false } },
          update: { $set: { search: searchTextOf(p) } },
        },
      })),
      { ordered: false },
    );
    count += res.modifiedCount;
  }
  await marks.updateOne({ _id: UPGRADE }, { $setOnInsert: { doneAt: new Date(), count } }, { upsert: true });
  return count;
}
