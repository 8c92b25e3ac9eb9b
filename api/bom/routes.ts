import { defineRoutes, type InputFailure } from '../route';
import { tenantOf, validBody, type AppContext } from '../context';
import { AppError } from '../../shared/errors/catalog';
import { bomAssignSchema, bomPatchSchema, MAX_COMPONENTS, NOT_SENT } from '../../shared/bom/schemas';
import { BomService, type BomBody } from '../../shared/bom/service';
import { summarize, type JsonSchema } from '../../shared/validation';

const scopes = {
  read: { scopes: ['products:read' as const] },
  update: { scopes: ['products:update' as const] },
  delete: { scopes: ['products:delete' as const] },
};

const tags = ['bom'];
const params: Record<string, JsonSchema> = {
  sku: { type: 'string', minLength: 1, maxLength: 100, description: "a product's SKU, any case (not a variant's)" },
};

const service = (ctx: AppContext) => new BomService(tenantOf(ctx).tenantDb);

/** A body the schema refused: one validation-error naming every field, saying why for fields a client may not send. */
function bomRefusal(failures: InputFailure[]): AppError {
  const seen = new Set<string>();
  const fieldErrors = failures
    .map((f) => {
      const name = f.keyword === 'additionalProperties' ? String(f.params.additionalProperty) : '';
      return { field: f.field, message: NOT_SENT[name] ?? f.message };
    })
    .filter((fe) => {
      const key = `${fe.field}\u0000${fe.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  return new AppError(400, 'validation-error', `Invalid bill of materials: ${summarize(fieldErrors)}`, {
    field: fieldErrors[0]?.field,
    fieldErrors,
  });
}

const invalid = {
  render: bomRefusal,
  missingBody: { code: 'validation-error', message: 'Send at least one field of the bill of materials to change' },
};

const COST_NOTE =
  '`calculatedCost {value, currency, calculatedAt}` is not stored: it is computed whenever the BOM is read, so a new receipt of a component changes it at once. ' +
  'It is the cost of ONE run of the BOM (what produces yield.quantity yield.unit): for each component, the base-unit quantity one run takes ' +
  "(quantity × its unit's conversion factor × (1 + wastagePercent/100), rounded half away from zero to the base unit's precision, as a consumption deducts it) " +
  "at the current cost per base unit (a material: its costing's currentCost, else initialCost before any receipt; a supply: its price, 0 without one), rounded to cents; " +
  "the components' cents are summed. Substitutes do not count. Components priced in different currencies, or one whose unit the material no longer has, " +
  'give value and currency null and a `note` saying why.';

const RULES =
  'Components name materials or supplies of the tenant (not products or variants; a SKU in any case, stored upper-case), each in its base unit or one of its alternative units (any case); ' +
  "a material is one component only (put its whole quantity there), and a substitute is neither its component's own material nor named twice for it. " +
  `At most ${MAX_COMPONENTS} components. \`sequence\` is assigned from 0 in the order sent; \`preparationNotes\` may be a text or \`{value}\`. ` +
  'The same rules hold for a billOfMaterials sent with PUT /products/{id} or a CSV import.';

const badBody =
  'validation-error naming each field (`components.<i>.materialSku` for a SKU that is not a material or supply of the tenant, or a material named twice; `components.<i>.unit` for a unit the material does not have; an unknown field)';

export const bomRoutes = defineRoutes([
  {
    method: 'get',
    path: '/products/:sku/bom',
    summary: "A product's bill of materials, with its current cost",
    description: COST_NOTE,
    tags,
    auth: scopes.read,
    params,
    responses: {
      200: {
        description:
          'the billOfMaterials `{consumptionMode, yield, components[{materialSku, quantity, unit, required, sequence, substitutes[], notes}], wastagePercent, preparationNotes, prepTimeMinutes, calculatedCost}`',
      },
      400: { description: 'validation-error: a SKU over 100 characters' },
      404: {
        description:
          "not-found 'Product or BOM not found': no product of this SKU (a variant's SKU included), or no BOM",
      },
    },
    handler: async (ctx) => {
      ctx.body = await service(ctx).get(ctx.params.sku);
    },
  },
  {
    method: 'put',
    path: '/products/:sku/bom',
    summary: "Assigns a product's bill of materials, replacing any it had",
    description: `${RULES} ${COST_NOTE}`,
    tags,
    auth: scopes.update,
    params,
    body: bomAssignSchema,
    invalid,
    responses: {
      200: { description: '`{sku, billOfMaterials}` (with calculatedCost)' },
      400: { description: badBody },
      404: { description: "not-found 'Product or BOM not found': no product of this SKU (a variant's SKU included)" },
      409: { description: 'conflict: the product changed while this was applied; read it again and retry' },
    },
    handler: async (ctx) => {
      ctx.body = await service(ctx).assign(ctx.params.sku, validBody<BomBody>(ctx));
    },
  },
  {
    method: 'patch',
    path: '/products/:sku/bom',
    summary: "Updates some fields of a product's bill of materials",
    description: `The fields sent replace the stored ones: components as a whole, yield merged. ${RULES}`,
    tags,
    auth: scopes.update,
    params,
    body: bomPatchSchema,
    invalid,
    responses: {
      200: { description: '`{sku, billOfMaterials}` (with calculatedCost)' },
      400: { description: `${badBody}; an empty body` },
      404: { description: "not-found 'Product or BOM not found': no product of this SKU, or no BOM to update" },
      409: { description: 'conflict: the product changed while this was applied; read it again and retry' },
    },
    handler: async (ctx) => {
      ctx.body = await service(ctx).update(ctx.params.sku, validBody<BomBody>(ctx));
    },
  },
  {
    method: 'delete',
    path: '/products/:sku/bom',
    summary: "Removes a product's bill of materials",
    tags,
    auth: scopes.delete,
    params,
    responses: {
      200: { description: '`{success: true, message}`' },
      400: { description: 'validation-error: a SKU over 100 characters' },
      404: { description: "not-found 'Product or BOM not found': no product of this SKU, or no BOM" },
      409: { description: 'conflict: the product changed while this was applied; read it again and retry' },
    },
    handler: async (ctx) => {
      ctx.body = await service(ctx).remove(ctx.params.sku);
    },
  },
]);
