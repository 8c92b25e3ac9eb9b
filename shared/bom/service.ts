import type { TenantDb } from '../db/tenant-db';
import { AppError, type FieldError } from '../errors/catalog';
import { Catalog } from '../products/catalog';
import { contentOf } from '../products/content';
import type { ProductDoc, ProductInput } from '../products/types';
import { isMaterial, stockRecordsBySku } from '../materials/records';
import { StockStore } from '../materials/stock';
import { summarize } from '../validation';
import { bomCost, costedOf, presentBom, type BillOfMaterials, type CalculatedCost, type CostedStock } from './present';

/** The spec's one answer for a SKU that is not a product of the tenant, or a product without a BOM. */
export function bomNotFound(sku: string): AppError {
  return new AppError(404, 'not-found', 'Product or BOM not found', { field: 'sku', details: { sku } });
}

/** A BOM body as the routes' schemas let it through (preparationNotes may still be a text). */
export type BomBody = Partial<Omit<BillOfMaterials, 'preparationNotes' | 'yield'>> & {
  yield?: Partial<BillOfMaterials['yield']>;
  preparationNotes?: string | { value: string };
};

const notesOf = (n: string | { value: string }) => (typeof n === 'string' ? { value: n } : n);

/**
 * The catalog's refusal of a product whose BOM breaks a rule names `billOfMaterials.<field>`;
 * the BOM routes name the fields of the body the client sent (`components.0.materialSku`).
 */
function asBomRefusal(err: unknown): unknown {
  if (!(err instanceof AppError) || err.codeFor('products') !== 'validation-error') return err;
  const fieldErrors = err.extra.fieldErrors as FieldError[] | undefined;
  const prefix = 'billOfMaterials.';
  if (!fieldErrors?.length || !fieldErrors.every((f) => f.field.startsWith(prefix))) return err;
  const own = fieldErrors.map((f) => ({ field: f.field.slice(prefix.length), message: f.message }));
  return new AppError(400, 'validation-error', `Invalid bill of materials: ${summarize(own)}`, {
    field: own[0].field,
    fieldErrors: own,
  });
}

/**
 * The bill of materials of a product: read with its current cost, assigned, partly updated,
 * removed. Every change is a product write through the catalog (Catalog.prepareInput, then the
 * version-guarded Catalog.update, announced as product.updated), so PUT /products, a CSV import
 * and these routes keep the same rules: components name materials or supplies of the tenant, in
 * one of their units.
 */
export class BomService {
  private readonly catalog: Catalog;

  constructor(private readonly tenantDb: TenantDb) {
    this.catalog = new Catalog(tenantDb);
  }

  /** The product whose SKU (any case) this is; a variant's, a material's or an unknown SKU is a 404. */
  private async product(sku: string): Promise<ProductDoc> {
    const owner = await this.catalog.skuOwner(sku.trim());
    const doc = owner?.kind === 'product' ? await this.catalog.get(owner.productId) : null;
    if (!doc) throw bomNotFound(sku);
    return doc;
  }

  private async withBom(sku: string): Promise<{ doc: ProductDoc; bom: BillOfMaterials }> {
    const doc = await this.product(sku);
    if (!doc.billOfMaterials) throw bomNotFound(sku);
    return { doc, bom: doc.billOfMaterials as unknown as BillOfMaterials };
  }

  /** The current cost of one run of a BOM (see bomCost). */
  async costOf(bom: BillOfMaterials, now = new Date()): Promise<CalculatedCost> {
    const records = await stockRecordsBySku(
      this.tenantDb,
      bom.components.map((c) => c.materialSku),
    );
    const store = new StockStore(this.tenantDb, 'material');
    const stocks = new Map<string, CostedStock>();
    await Promise.all(
      [...records.values()].map(async (r) =>
        stocks.set(r.sku, costedOf(r, isMaterial(r) ? await store.stockOf(r.sku) : null)),
      ),
    );
    return bomCost(bom, stocks, now);
  }

  private async present(bom: BillOfMaterials) {
    return presentBom(bom, await this.costOf(bom));
  }

  async get(sku: string) {
    const { bom } = await this.withBom(sku);
    return this.present(bom);
  }

  /** Replaces the product's BOM (or gives it one). */
  async assign(sku: string, body: BomBody) {
    const current = await this.product(sku);
    const { preparationNotes, ...rest } = body;
    const bom = { ...rest, ...(preparationNotes !== undefined ? { preparationNotes: notesOf(preparationNotes) } : {}) };
    return this.write(current, bom as BillOfMaterials);
  }

  /** The fields sent replace the stored ones: components as a whole, yield merged. */
  async update(sku: string, body: BomBody) {
    const { doc, bom } = await this.withBom(sku);
    const next = structuredClone(bom) as unknown as Record<string, unknown>;
    for (const [key, value] of Object.entries(body)) {
      if (value === undefined) continue;
      if (key === 'yield') next.yield = { ...bom.yield, ...(value as object) };
      else if (key === 'preparationNotes') next.preparationNotes = notesOf(value as string | { value: string });
      else next[key] = value;
    }
    return this.write(doc, next as unknown as BillOfMaterials);
  }

  async remove(sku: string) {
    const { doc } = await this.withBom(sku);
    const { billOfMaterials: _bom, ...rest } = inputOf(doc);
    await this.catalog.update(doc, rest as ProductInput);
    return { success: true, message: `Bill of materials of ${doc.sku} removed` };
  }

  private async write(current: ProductDoc, bom: BillOfMaterials) {
    let written: ProductDoc;
    try {
      const next = await this.catalog.prepareInput(
        { ...inputOf(current), billOfMaterials: bom as unknown as ProductInput['billOfMaterials'] },
        current,
      );
      written = await this.catalog.update(current, next);
    } catch (err) {
      throw asBomRefusal(err);
    }
    return {
      sku: written.sku,
      billOfMaterials: await this.present(written.billOfMaterials as unknown as BillOfMaterials),
    };
  }
}

/** A stored product as a write's input: without what the server manages. */
function inputOf(doc: ProductDoc): ProductInput {
  return contentOf(doc) as unknown as ProductInput;
}
