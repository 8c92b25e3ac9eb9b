import type { FieldError } from '../errors/catalog';

/**
 * The counts and summaries of a bulk edit, as pages answer them and the workflow adds them up.
 * Pure: imported by the workflow.
 */

/** A change of one field, at the deepest path where the two sides differ (lists compared whole). */
export interface FieldDiff {
  field: string;
  before: unknown;
  after: unknown;
}

export interface EditCounts {
  matched: number;
  changed: number;
  unchanged: number;
  invalid: number;
  failed: number;
}

/** A product the edit could not change, and why: `validation-error`, `conflict`, `not-found` or a model's error code. */
export interface ProductError {
  productId: string | null;
  sku: string;
  code: string;
  message: string;
  retryable?: boolean;
  fieldErrors?: FieldError[];
}

/** One field's changes: how many products, and the first few before/after pairs. */
export interface FieldSummary {
  field: string;
  changed: number;
  samples: { sku: string; before: unknown; after: unknown }[];
}

export interface PageResult {
  counts: EditCounts;
  errors: ProductError[];
  fields: FieldSummary[];
  /** Products of a preview changed since, planned again (SKUs). */
  replanned: string[];
  budgetExhausted: boolean;
}

export const SAMPLES_PER_FIELD = 5;
export const ZERO_COUNTS: EditCounts = { matched: 0, changed: 0, unchanged: 0, invalid: 0, failed: 0 };

/** The field a diff counts under: list positions dropped (`variants.0.price` → `variants.price`). */
const fieldKey = (field: string) => field.replace(/\.\d+(?=\.|$)/g, '');

export class FieldSummaries {
  private readonly byField = new Map<string, FieldSummary>();

  add(sku: string, diffs: FieldDiff[]): void {
    const counted = new Set<string>();
    for (const d of diffs) {
      const key = fieldKey(d.field);
      const s = this.byField.get(key) ?? { field: key, changed: 0, samples: [] };
      this.byField.set(key, s);
      if (!counted.has(key)) s.changed++;
      counted.add(key);
      if (s.samples.length < SAMPLES_PER_FIELD) s.samples.push({ sku, before: d.before, after: d.after });
    }
  }

  merge(fields: FieldSummary[]): void {
    for (const f of fields) {
      const s = this.byField.get(f.field) ?? { field: f.field, changed: 0, samples: [] };
      this.byField.set(f.field, s);
      s.changed += f.changed;
      s.samples.push(...f.samples.slice(0, SAMPLES_PER_FIELD - s.samples.length));
    }
  }

  list(): FieldSummary[] {
    return [...this.byField.values()].sort((a, b) => a.field.localeCompare(b.field));
  }
}
