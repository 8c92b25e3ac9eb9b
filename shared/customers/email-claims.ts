import { ObjectId } from 'mongodb';
import { isDuplicateKeyError } from '../db/duplicate-key';
import type { TenantDb } from '../db/tenant-db';
import { customerEmails, customers, emailClaimId } from './collections';
import { customerErrors } from './errors';

/** A claim older than this whose customer does not hold its e-mail is left over from a crashed write. */
const ORPHAN_AFTER_MS = 5 * 60_000;

/**
 * The tenant's e-mail space: at most one customer per e-mail (any case). The claim's primary key
 * decides between concurrent writers; the customer document is the authority on which e-mail a
 * customer holds, and `settle` brings the claims back in line with it after every write.
 */
export class EmailClaims {
  constructor(private readonly tenantDb: TenantDb) {}

  private get claims() {
    return this.tenantDb.collection(customerEmails);
  }

  private idOf(emailKey: string): string {
    return emailClaimId(this.tenantDb.tenantId, emailKey);
  }

  /**
   * Takes `emailKey` for `customerId`, or refuses with 409 duplicate-email naming the holder.
   * Already ours (a retried or concurrent write of the same customer): it holds.
   */
  async claim(emailKey: string, email: string, customerId: string): Promise<void> {
    const _id = this.idOf(emailKey);
    for (let attempt = 0; ; attempt++) {
      try {
        await this.claims.insertOne({ _id, emailKey, customerId, createdAt: new Date() });
        return;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
      }
      const holder = await this.claims.findOne({ _id });
      if (!holder) {
        if (attempt < 3) continue; // released between our insert and our read: try again
        throw customerErrors.duplicateEmail(email);
      }
      if (holder.customerId === customerId) return;
      if (attempt === 0 && (await this.isOrphan(holder.customerId, emailKey, holder.createdAt))) {
        await this.claims.deleteOne({ _id, customerId: holder.customerId });
        continue;
      }
      throw customerErrors.duplicateEmail(email, holder.customerId);
    }
  }

  /** Gives back a claim of `customerId` (never another customer's). */
  async release(emailKey: string, customerId: string): Promise<void> {
    await this.claims.deleteOne({ _id: this.idOf(emailKey), customerId });
  }

  /**
   * Brings the claims of `keys` in line with what the customer holds now: the e-mail it holds
   * keeps (or gets back) its claim, any other of these keys it claimed is released. Run after a
   * write of the customer, whether it went through or not; since it reads the customer first,
   * a concurrent writer of the same customer that wins later settles again after itself.
   */
  async settle(customerId: string, keys: Iterable<string>): Promise<void> {
    const wanted = [...new Set(keys)];
    if (!wanted.length) return;
    const doc = await this.tenantDb.collection(customers).findOne({ _id: new ObjectId(customerId) });
    const held = doc?.redactedAt ? undefined : doc?.emailKey;
    for (const key of wanted) {
      if (key === held) {
        await this.claims
          .insertOne({ _id: this.idOf(key), emailKey: key, customerId, createdAt: new Date() })
          .catch((err) => {
            if (!isDuplicateKeyError(err)) throw err;
          });
      } else await this.release(key, customerId);
    }
  }

  /** A claim old enough whose customer is gone or holds another e-mail. */
  private async isOrphan(customerId: string, emailKey: string, createdAt: Date): Promise<boolean> {
    if (Date.now() - createdAt.getTime() < ORPHAN_AFTER_MS) return false;
    if (!/^[0-9a-f]{24}$/i.test(customerId)) return true;
    const doc = await this.tenantDb
      .collection(customers)
      .findOne({ _id: new ObjectId(customerId) }, { projection: { emailKey: 1, redactedAt: 1 } });
    return !doc || doc.emailKey !== emailKey || Boolean(doc.redactedAt);
  }
}
