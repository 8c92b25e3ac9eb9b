import type { Db } from 'mongodb';
import type { CollectionDef } from '../../shared/db/collection';
import { TenantDb, type TenantCollection, type TenantDoc } from '../../shared/db/tenant-db';

/** Which call waits: the `call`-th (from 1) `method` on `collection` made through this TenantDb. */
export interface HoldAt {
  collection: string;
  method: 'findOne' | 'findOneAndUpdate' | 'updateOne' | 'deleteOne';
  call: number;
}

/** The tenant's data, where one call waits for `release()` once it is about to be sent. */
export class Held extends TenantDb {
  private calls = 0;
  private open!: () => void;
  private readonly opened = new Promise<void>((resolve) => (this.open = resolve));
  private arrive!: () => void;
  /** Resolves when the call is waiting. */
  readonly reached = new Promise<void>((resolve) => (this.arrive = resolve));

  constructor(
    db: Db,
    tenantId: string,
    private readonly at: HoldAt,
  ) {
    super(db, tenantId);
  }

  release(): void {
    this.open();
  }

  override collection<T extends TenantDoc>(def: CollectionDef<T>): TenantCollection<T> {
    const col = super.collection(def);
    if (def.name !== this.at.collection) return col;
    const real = col[this.at.method].bind(col) as (...args: unknown[]) => Promise<unknown>;
    (col as unknown as Record<string, unknown>)[this.at.method] = async (...args: unknown[]) => {
      if (++this.calls === this.at.call) {
        this.arrive();
        await this.opened;
      }
      return real(...args);
    };
    return col;
  }
}
