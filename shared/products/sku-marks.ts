import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { NAMED_HOLD_MS } from '../materials/lookup';
import { claimId, productSkus } from './collections';

/*
 * A bundle names other products' SKUs, and a delete or a write that gives such a SKU up refuses
 * (Catalog.refuseIfBundled). Both check, then store: without more, a bundle stored while its
 * component is deleted or renamed would name a SKU nobody holds. So the SKU's claim in the one
 * SKU space carries two marks, as a material's record does (materials/lookup.ts holdNamed): a
 * bundle write sets `namedAt` before it stores, and a giving-up sets `leavingAt` before it looks
 * for bundles (and for stock). Whichever marks second sees the other's mark. A stock write reads
 * the claim after it lands instead (decidedSkuStanding): it adds no write to a movement.
 */

/** How long a giving-up's mark stands: it decides in far less, so an older one is a dead process's. */
const LEAVING_MARK_MS = 60_000;

/**
 * Marks the product and variant SKUs a bundle write names as named now. Answers the SKUs no
 * product or variant holds (`missing`), those being given up (`leaving`), and the release of this
 * write's own marks (called once the write landed or failed; a bulk write's marks expire).
 */
export async function holdComponents(
  tenantDb: TenantDb,
  skus: string[],
): Promise<{ missing: string[]; leaving: string[]; release: () => Promise<void> }> {
  const col = tenantDb.collection(productSkus);
  const ids = skus.map((sku) => claimId(tenantDb.tenantId, sku));
  const now = new Date();
  const stale = new Date(now.getTime() - LEAVING_MARK_MS);
  const marked = await col.updateMany(
    {
      _id: { $in: ids },
      kind: { $in: ['product', 'variant'] },
      $or: [{ leavingAt: { $exists: false } }, { leavingAt: { $lt: stale } }],
    } as never,
    { $set: { namedAt: now } },
  );
  const missing: string[] = [];
  const leaving: string[] = [];
  if (marked.matchedCount < ids.length) {
    const found = new Map((await col.findByIds(ids)).map((c) => [c.sku, c]));
    for (const sku of skus) {
      const claim = found.get(sku.toUpperCase());
      if (!claim || (claim.kind !== 'product' && claim.kind !== 'variant')) missing.push(sku);
      else if (claim.leavingAt && claim.leavingAt >= stale) leaving.push(sku);
    }
  }
  // only this write's own mark: another write may have marked since
  const release = async () => {
    await col.updateMany({ _id: { $in: ids }, namedAt: now } as never, { $unset: { namedAt: '' } });
  };
  return { missing, leaving, release };
}

/**
 * Marks the SKUs product `productId` is about to give up (a delete, a rename, a dropped variant)
 * as leaving, before the caller looks for bundles (and stock) naming them. A bundle write that
 * named one moments ago may not be stored yet: 409, retry once it has (then the bundle is seen
 * and refuses). Answers the removal of the mark, for a giving-up that did not happen.
 */
export async function markLeaving(tenantDb: TenantDb, productId: string, skus: string[]): Promise<() => Promise<void>> {
  const { named, unmark } = await markLeavingMany(tenantDb, [{ productId, skus }]);
  const held = named.get(productId);
  if (held) {
    await unmark([productId]);
    throw new AppError(
      409,
      'conflict',
      `${held.skus.join(', ')} ${held.skus.length === 1 ? 'was' : 'were'} named by a bundle write moments ago: retry in ${Math.ceil(held.waitMs / 1000)} s`,
      { details: { skus: held.skus } },
    );
  }
  return () => unmark([productId]);
}

/**
 * markLeaving for several products at once (a rollback deleting what its import created): each
 * product's SKUs are marked; `named` holds the products a bundle write named moments ago (with
 * the SKUs, and how long the hold stands), which the caller keeps and unmarks.
 */
export async function markLeavingMany(
  tenantDb: TenantDb,
  owners: { productId: string; skus: string[] }[],
): Promise<{
  named: Map<string, { skus: string[]; waitMs: number }>;
  unmark: (productIds: string[]) => Promise<void>;
}> {
  const col = tenantDb.collection(productSkus);
  const idsOf = (productIds: string[]) =>
    owners
      .filter((o) => productIds.includes(o.productId))
      .flatMap((o) => o.skus.map((sku) => claimId(tenantDb.tenantId, sku)));
  const ids = idsOf(owners.map((o) => o.productId));
  const now = new Date();
  const named = new Map<string, { skus: string[]; waitMs: number }>();
  if (!ids.length) return { named, unmark: async () => {} };
  await col.updateMany({ _id: { $in: ids }, productId: { $in: owners.map((o) => o.productId) } } as never, {
    $set: { leavingAt: now },
  });
  // only this giving-up's own mark: another may have marked since
  const unmark = async (productIds: string[]) => {
    const mine = idsOf(productIds);
    if (mine.length)
      await col.updateMany({ _id: { $in: mine }, leavingAt: now } as never, { $unset: { leavingAt: '' } });
  };
  for (const c of await col.findByIds(ids)) {
    const age = c.namedAt ? now.getTime() - c.namedAt.getTime() : Infinity;
    if (age >= NAMED_HOLD_MS) continue;
    const held = named.get(c.productId) ?? { skus: [], waitMs: 0 };
    held.skus.push(c.sku);
    held.waitMs = Math.max(held.waitMs, NAMED_HOLD_MS - age);
    named.set(c.productId, held);
  }
  return { named, unmark };
}

/**
 * Whether a product or variant still holds `sku`, as read after a stock write landed: 'gone' when
 * no product or variant holds it, 'leaving' when a giving-up did not decide within `waitMs`
 * (waited for, as Locations.decidedStanding waits for a location's delete), else 'ok'.
 */
export async function decidedSkuStanding(
  tenantDb: TenantDb,
  sku: string,
  waitMs = 5_000,
): Promise<'ok' | 'gone' | 'leaving'> {
  const col = tenantDb.collection(productSkus);
  const standing = async (): Promise<'ok' | 'gone' | 'leaving'> => {
    const claim = await col.findOne({ _id: claimId(tenantDb.tenantId, sku) });
    if (!claim || (claim.kind !== 'product' && claim.kind !== 'variant')) return 'gone';
    return claim.leavingAt && Date.now() - claim.leavingAt.getTime() < LEAVING_MARK_MS ? 'leaving' : 'ok';
  };
  let found = await standing();
  for (const until = Date.now() + waitMs; found === 'leaving' && Date.now() < until;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    found = await standing();
  }
  return found;
}
