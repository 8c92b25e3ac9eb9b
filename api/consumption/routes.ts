import { defineRoutes, type RouteSpec } from '../route';
import { idempotencyKeyOf, tenantOf, validBody, type AppContext } from '../context';
import { ConsumptionService, type BomRunRequest, type ConsumptionRequest } from '../../shared/consumption/service';
import type { JsonSchema } from '../../shared/validation';
import { timeZoneOf } from '../../shared/auth/tenancy';

const service = (ctx: AppContext) => {
  const { tenantDb, principal } = tenantOf(ctx);
  return new ConsumptionService(tenantDb, principal.keyId, async () =>
    timeZoneOf(await ctx.deps.tenancy.getTenant(principal.tenantId)),
  );
};

const text = (max: number): JsonSchema => ({ type: 'string', minLength: 1, maxLength: max });
const quantity: JsonSchema = { type: 'number', exclusiveMinimum: 0, maximum: 1e12 };

const selectedModifiers: JsonSchema = {
  type: 'array',
  maxItems: 100,
  description: 'modifiers chosen with the product (ids are the server UUIDs); their materials are consumed too',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['groupId', 'modifierId'],
    properties: {
      groupId: text(100),
      modifierId: text(100),
      quantity: { type: 'integer', minimum: 1, maximum: 1000, default: 1 },
    },
  },
};

const common = {
  productSku: {
    ...text(100),
    description: 'a product (or variant) SKU: its BOM and the selected modifiers say what it uses',
  },
  locationId: text(100),
  quantity: { ...quantity, default: 1, description: 'how much of the product (in its BOM yield unit)' },
  selectedModifiers,
};

const consumptionBody = (extra: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  required: ['productSku', 'locationId'],
  properties: { ...common, ...extra },
});

const consumeOptions: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    method: {
      type: 'string',
      enum: ['fifo', 'lifo'],
      description: "the order lots leave in; default each material's costing method",
    },
    referenceId: {
      ...text(200),
      description: 'exactly once per referenceId: a retry answers the first result (replayed: true) and takes nothing',
    },
    referenceType: text(50),
  },
};

const bomRunBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['quantity'],
  properties: {
    quantity: { ...quantity, description: 'how much to produce, in the BOM yield unit' },
    referenceId: text(200),
    referenceType: { type: 'string', enum: ['order', 'production', 'sample', 'waste'], default: 'production' },
    allowSubstitutes: { type: 'boolean', default: false },
    notes: { type: 'string', maxLength: 2000 },
    locationId: { ...text(100), description: "where the stock is taken; default the tenant's default location" },
  },
};

const NOTES =
  'Quantities: each BOM component needs quantity × (quantity / yield.quantity) × (1 + wastagePercent / 100), converted to the material’s base unit and rounded half away from zero to its precision; ' +
  'a selected modifier’s materials are its inventoryConsumption × its quantity × quantity. ' +
  'An optional component (required: false) whose stock is short is left out.';

export const consumptionRoutes: RouteSpec[] = defineRoutes([
  {
    method: 'post',
    path: '/products/materials/consumption/check',
    summary: 'Whether the stock at a location covers a product’s consumption (nothing is taken)',
    description: NOTES,
    tags: ['consumption'],
    auth: { scopes: ['inventory:read'] },
    body: consumptionBody(),
    responses: {
      200: {
        description:
          '`{available, calculation: {components[{materialSku, source bom|modifier, quantity, unit, required, skipped?}], totalMaterials, byMaterial[{materialSku, kind, quantity, unit}]}, details[{materialSku, required, available, unit, sufficient}]}`; a product without BOM or consuming modifiers: totalMaterials 0',
      },
      404: { description: 'not-found: product or location' },
    },
    handler: async (ctx) => {
      ctx.body = await service(ctx).check(validBody<ConsumptionRequest>(ctx));
    },
  },
  {
    method: 'post',
    path: '/products/materials/consumption/estimate',
    summary: 'What a product’s consumption would cost now',
    description: `${NOTES} Each material at its current cost (costing.currentCost), a supply at its price.`,
    tags: ['consumption'],
    auth: { scopes: ['inventory:read'] },
    body: consumptionBody(),
    responses: {
      200: {
        description:
          '`{totalCost, currency, breakdown[{materialSku, quantity, unit, costPerUnit, totalCost, currency}]}`; materials in several currencies: totalCost and currency null, `totals[]` per currency',
      },
      404: { description: 'not-found: product or location' },
    },
    handler: async (ctx) => {
      ctx.body = await service(ctx).estimate(validBody<ConsumptionRequest>(ctx));
    },
  },
  {
    method: 'post',
    path: '/products/materials/consumption/consume',
    idempotency: 'native',
    summary: 'Consume a product’s materials at a location: all or nothing, exactly once per referenceId',
    description:
      `${NOTES} Lots leave by options.method (or each material’s costing method; expired lots never, FEFO first for an expiring material). ` +
      'The cost is what the lots taken were worth (fifo/lifo), or the average / last purchase cost, or a supply’s price. ' +
      'Without options.referenceId an Idempotency-Key header makes a retry answer the first result.',
    tags: ['consumption'],
    auth: { scopes: ['inventory:update'] },
    body: consumptionBody({ options: consumeOptions }),
    responses: {
      200: {
        description:
          '`{success, consumptionId, replayed, locationId, consumed[{materialSku, quantity, unit, costPerUnit, totalCost, lotsConsumed[]}], totalCost, currency, errors[]}`',
      },
      400: {
        description: 'consumption-failed with `errors[{materialSku, required, available, unit, error}]`: nothing taken',
      },
      404: { description: 'not-found: product or location' },
      409: {
        description:
          'conflict: the referenceId (or Idempotency-Key) was used for another product or quantity; nothing taken',
      },
    },
    handler: async (ctx) => {
      ctx.body = await service(ctx).consume(validBody(ctx), idempotencyKeyOf(ctx));
    },
  },
  {
    method: 'post',
    path: '/products/:sku/bom/consume',
    idempotency: 'native',
    summary:
      'Run a product’s bill of materials: take its components from real stock, all or nothing, exactly once per reference',
    description:
      `${NOTES} Substitutes are used only with allowSubstitutes and only when the primary is short: the primary gives what it has and the first substitute that covers the rest gives it (conversionFactor substitute base units per primary base unit). ` +
      'Lots leave in the order of each material’s costing method. Exactly once per (product, referenceType, referenceId): a retry answers the first result (replayed: true) and takes nothing; without referenceId an Idempotency-Key does the same.',
    tags: ['bom'],
    auth: { scopes: ['products:update'] },
    params: { sku: text(100) },
    body: bomRunBody,
    responses: {
      200: {
        description:
          '`{success, sku, quantityProduced, unit, componentsConsumed[{materialSku, quantity, unit, costPerUnit, totalCost, substituted, lotsConsumed[]}], totalCost, currency, referenceId, referenceType, notes, locationId, consumptionId, consumedAt, replayed}`',
      },
      400: {
        description: 'insufficient-stock with `errors[{materialSku, required, available, unit, error}]`: nothing taken',
      },
      404: { description: "not-found 'Product or BOM not found'; an unknown location" },
    },
    handler: async (ctx) => {
      ctx.body = await service(ctx).runBom(ctx.params.sku, validBody<BomRunRequest>(ctx), idempotencyKeyOf(ctx));
    },
  },
]);
