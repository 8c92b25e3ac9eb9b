/** What a binding says about the copy of the product its channel holds. */
interface SyncedBinding {
  syncStatus?: unknown;
  syncedVersion?: unknown;
}

/**
 * A binding's syncStatus as it stands. A publication records `synced` with the product version
 * it sent (`syncedVersion`, shared by every write path: each one moves the version), so a
 * product written since, or while the send was on its way, reads `pending`: the channel holds an
 * older copy. A binding without syncedVersion (set by a client, or recorded before the version
 * was) reads as stored.
 */
export function syncStatusOf(binding: object, version: number): string | undefined {
  const { syncStatus, syncedVersion: sent } = binding as SyncedBinding;
  const status = syncStatus as string | undefined;
  return status === 'synced' && typeof sent === 'number' && sent !== version ? 'pending' : status;
}

/** The bindings as the API shows them: each with its syncStatus as it stands (syncStatusOf). */
export function withSyncStatus<B extends object>(bindings: B[] | undefined, version: number): B[] | undefined {
  return bindings?.map((b) => {
    const status = syncStatusOf(b, version);
    return status === (b as SyncedBinding).syncStatus ? b : { ...b, syncStatus: status };
  });
}
