/** The caps of CSV import and export: the server's, whatever a client sends. */

/** Caps on every async import (a config that sends them is not refused: the values are ignored). */
export const ASYNC_LIMITS = { maxRows: 100_000, maxVariantsPerProduct: 500, chunkSize: 500 } as const;

/** Per tenant: async CSV jobs running at once, and started per hour; over either, 429 rate-limited. */
export const JOB_RATE = { concurrent: 3, perHour: 60 } as const;

/** The synchronous import takes CSV text in the body up to this size; larger files go through the async flow. */
export const SYNC_MAX_BYTES = 2 * 1024 * 1024;
export const SYNC_MAX_ROWS = 5000;

/** The synchronous export answers at most this many products; larger exports are jobs. */
export const SYNC_EXPORT_MAX = 1000;

/** Most productIds an async export takes (the spec's too-many-products above). */
export const MAX_EXPORT_IDS = 5000;
