import { contentOf } from '../products/content';
import type { TenantDb } from '../db/tenant-db';
import { AppError, type FieldError } from '../errors/catalog';
import { stockRecordsBySku, unitsOf } from '../materials/records';
import type { UnitSystem } from '../materials/quantity';
import { Catalog } from '../products/catalog';
import type { ProductDoc, ProductInput } from '../products/types';
import { summarize } from '../validation';
import {
  buildModifiersConfig,
  consumedSkus,
  patchGroup,
  type ConfigureContext,
  type ConfigureInput,
  type GroupPatch,
} from './configure';
import {
  basePriceFor,
  checkSelection,
  type ModifierSelection,
  type ModifiersConfig,
  type SelectionResult,
} from './selection';

/**
 * The modifiers of one tenant's products: read, configure (replace), update or delete one group,
 * disable, and validate a selection. The configuration lives on the product document
 * (`modifiersConfig`), so every change is a product write through Catalog (schema, rules, the
 * version guard); a write that loses the race to another change of the product is applied again
 * to the product as it now is (a few times), since each change here is defined on whatever is stored.
 */

/** The fields of a stored product the server manages, left out of what is written back. */
const WRITE_ATTEMPTS = 3;
/** Material and supply SKUs looked up at once. */
const LOOKUP_BATCH = 25;

export interface ValidateRequest {
  selections: ModifierSelection[];
  variantSku?: string;
}

function invalid(fieldErrors: FieldError[]): AppError {
  return new AppError(400, 'validation-error', `Invalid modifiers: ${summarize(fieldErrors)}`, {
    field: fieldErrors[0]?.field,
    fieldErrors,
  });
}

const productNotFound = (sku: string) =>
  new AppError(404, 'not-found', `Product ${sku.trim().toUpperCase()} not found`, { field: 'sku' });

/** What GET answers for a product: its configuration, or the empty disabled one if it has none. */
export function presentModifiers(doc: Pick<ProductDoc, 'modifiersConfig'>): ModifiersConfig {
  const c = doc.modifiersConfig as unknown as ModifiersConfig | undefined;
  if (!c) return { enabled: false, groups: [] };
  return { enabled: c.enabled, groups: c.groups, ...(c.conditions ? { conditions: c.conditions } : {}) };
}

export class ModifierService {
  private readonly catalog: Catalog;

  constructor(private readonly tenantDb: TenantDb) {
    this.catalog = new Catalog(tenantDb);
  }

  /** A product by its SKU (any case); a variant's, a material's or another tenant's SKU is not one: 404. */
  async product(sku: string): Promise<ProductDoc> {
    const claim = await this.catalog.skuOwner(sku.trim());
    const doc = claim?.kind === 'product' ? await this.catalog.get(claim.productId) : null;
    if (!doc) throw productNotFound(sku);
    return doc;
  }

  async get(sku: string): Promise<ModifiersConfig> {
    return presentModifiers(await this.product(sku));
  }

  /** Replaces the whole configuration. */
  async configure(sku: string, input: ConfigureInput): Promise<{ sku: string; modifiersConfig: ModifiersConfig }> {
    const units = await this.unitsOf(consumedSkus(input.groups));
    const written = await this.change(sku, async (doc) => {
      const built = buildModifiersConfig(input, this.context(doc, units));
      if (built.errors.length) throw invalid(built.errors);
      return built.value;
    });
    return { sku: written.sku, modifiersConfig: presentModifiers(written) };
  }

  /** Changes one group, found by its UUID (404 when the product has none such). */
  async updateGroup(
    sku: string,
    groupId: string,
    patch: GroupPatch,
  ): Promise<{ sku: string; modifiersConfig: ModifiersConfig }> {
    const units = await this.unitsOf(consumedSkus([patch]));
    const written = await this.change(sku, async (doc) => {
      const config = configOf(doc);
      const at = config?.groups.findIndex((g) => g.id === groupId) ?? -1;
      if (!config || at < 0)
        throw new AppError(404, 'not-found', `No modifier group ${groupId} in product ${doc.sku}`, {
          field: 'groupId',
        });
      const built = patchGroup(config.groups[at], patch, this.context(doc, units));
      if (built.errors.length) throw invalid(built.errors);
      return { ...config, groups: config.groups.map((g, i) => (i === at ? built.value : g)) };
    });
    return { sku: written.sku, modifiersConfig: presentModifiers(written) };
  }

  /** Turns the modifiers off, keeping the groups. Already off (or never configured): nothing to write. */
  async disable(sku: string): Promise<{ success: true; message: string }> {
    const written = await this.change(sku, async (doc) => {
      const config = configOf(doc);
      return config?.enabled ? { ...config, enabled: false } : null;
    });
    return { success: true, message: `Modifiers of product ${written.sku} disabled` };
  }

  /** Removes one group; an id the product does not have changes nothing and answers the same. */
  async deleteGroup(sku: string, groupId: string): Promise<{ success: true; message: string }> {
    const written = await this.change(sku, async (doc) => {
      const config = configOf(doc);
      if (!config?.groups.some((g) => g.id === groupId)) return null;
      return { ...config, groups: config.groups.filter((g) => g.id !== groupId) };
    });
    return { success: true, message: `Modifier group ${groupId} removed from product ${written.sku}` };
  }

  /**
   * The verdict on a selection, at `now` in the tenant's `timeZone`. The base price is the
   * variant's when `variantSku` names one of the product's variants (400 for another SKU; the
   * product's own SKU is the product), else the product's.
   */
  async validate(sku: string, req: ValidateRequest, timeZone: string, now = new Date()): Promise<SelectionResult> {
    const doc = await this.product(sku);
    const basePrice = basePriceFor(doc, req.variantSku);
    if (basePrice === null)
      throw invalid([
        { field: 'variantSku', message: `is not a variant SKU of product ${doc.sku} (${req.variantSku})` },
      ]);
    const mismatched = req.selections.flatMap((s, i) =>
      s.quantities && s.quantities.length !== s.modifierIds.length
        ? [
            {
              field: `selections.${i}.quantities`,
              message: `must have one entry per modifierIds entry (${s.quantities.length} for ${s.modifierIds.length})`,
            },
          ]
        : [],
    );
    if (mismatched.length) throw invalid(mismatched);
    const variantSku = req.variantSku?.trim().toUpperCase();
    return checkSelection(configOf(doc), req.selections, {
      basePrice,
      variantSku: variantSku === doc.sku ? undefined : variantSku,
      now,
      timeZone,
    });
  }

  private context(doc: ProductDoc, units: ReadonlyMap<string, UnitSystem>): ConfigureContext {
    return { units, currency: doc.currency, variantSkus: new Set(doc.variants.map((v) => v.sku.toUpperCase())) };
  }

  /** The unit systems of the records `skus` name, read a batch at a time (a large configuration stays a few reads in flight). */
  private async unitsOf(skus: string[]): Promise<Map<string, UnitSystem>> {
    const wanted = [...new Set(skus.map((s) => s.trim().toUpperCase()))];
    const units = new Map<string, UnitSystem>();
    for (let i = 0; i < wanted.length; i += LOOKUP_BATCH) {
      const records = await stockRecordsBySku(this.tenantDb, wanted.slice(i, i + LOOKUP_BATCH));
      for (const [sku, r] of records) units.set(sku, unitsOf(r));
    }
    return units;
  }

  /**
   * Reads the product, computes its next configuration (null: nothing to change) and writes the
   * product with it; a concurrent write of the product in between (409) runs it again.
   */
  private async change(sku: string, next: (doc: ProductDoc) => Promise<ModifiersConfig | null>): Promise<ProductDoc> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.product(sku);
      const config = await next(current);
      if (!config) return current;
      const input = { ...contentOf(current), modifiersConfig: config };
      const prepared = await this.catalog.prepare(input as unknown as ProductInput, current);
      try {
        return await this.catalog.update(current, prepared);
      } catch (err) {
        if (err instanceof AppError && err.codeFor('products') === 'conflict' && attempt < WRITE_ATTEMPTS) continue;
        throw err;
      }
    }
  }
}

function configOf(doc: ProductDoc): ModifiersConfig | undefined {
  return doc.modifiersConfig as unknown as ModifiersConfig | undefined;
}
