import { defineRoutes } from '../route';
import { tenantOf, validBody, type AppContext } from '../context';
import { timeZoneOf } from '../../shared/auth/tenancy';
import type { ConfigureInput, GroupPatch } from '../../shared/modifiers/configure';
import { configureSchema, groupPatchSchema, validateSchema } from '../../shared/modifiers/schemas';
import { ModifierService, type ValidateRequest } from '../../shared/modifiers/service';
import type { JsonSchema } from '../../shared/validation';

const scopes = {
  read: { scopes: ['products:read' as const] },
  update: { scopes: ['products:update' as const] },
  delete: { scopes: ['products:delete' as const] },
};
const tags = ['modifiers'];
const skuParam: Record<string, JsonSchema> = {
  sku: { type: 'string', minLength: 1, maxLength: 100, description: "a product's SKU, any case (not a variant's)" },
};
const groupParams: Record<string, JsonSchema> = {
  ...skuParam,
  groupId: { type: 'string', minLength: 1, maxLength: 100, description: "the group's id (UUID), not its code" },
};

const service = (ctx: AppContext) => new ModifierService(tenantOf(ctx).tenantDb);

const CONFIG_NOTES =
  'The configuration is stored on the product (`modifiersConfig`). Groups get server UUIDs and codes `group-<n>` (1-based, in order); ' +
  'modifiers get UUIDs and codes `<group code>-<n>`; `displayName` is stored as `description`, `sortOrder` as `position` (default: the index), ' +
  '`isAvailable` as `available` (default true); `inventoryConsumption` `{materialSku, quantity, unit}` is stored as `[{sku, quantity, unit}]` ' +
  "and must name a material or supply of the tenant in one of its units (any case; stored as the record spells it). Price adjustments are in the product's currency.";

const VALIDATE_NOTES =
  'Ids are the UUIDs of groups and modifiers, not their codes. `quantities[i]` is how many of `modifierIds[i]` (default 1); ' +
  "a group's count for minSelections/maxSelections is the sum of quantities. An exactlyOne group chosen at all takes exactly one; " +
  'the same modifier more than once (a quantity above 1, or listed twice) needs allowDuplicates and stays within maxPerModifier. ' +
  "conditions (variantSkus, availableHours, availableDays) are read now in the tenant's time zone (settings.timeZone, UTC by default): " +
  'outside them, as when the configuration is disabled, no modifier may be chosen and none is required. ' +
  'Adjustments, on the variant price when `variantSku` names one, else the product price: fixed adds value × quantity; percentage value % of the price × quantity; ' +
  'replace sets the price to value (adds value − price, once; at most one per selection). Each error is `{groupId?, modifierId?, rule, message}`, rule one of ' +
  'minSelections, maxSelections, exactlyOne, allowDuplicates, maxPerModifier, unavailable, unknown-group, unknown-modifier, variant, hours, days, disabled, replace, quantities.';

export const modifierRoutes = defineRoutes([
  {
    method: 'post',
    path: '/products/:sku/modifiers/validate',
    summary: "Checks a selection of modifiers against the product's rules and prices it",
    description: VALIDATE_NOTES,
    tags,
    auth: scopes.read,
    params: skuParam,
    body: validateSchema,
    responses: {
      200: {
        description:
          '`{valid, errors[{groupId?, modifierId?, rule, message}], selectedModifiers[{groupId, groupName, modifierId, modifierName, quantity, priceAdjustment{type, value, currency, amount} | null, inventoryConsumption[{sku, quantity, unit}]}], totalPriceAdjustment, materialsToConsume[{sku, quantity, unit}]}`',
      },
      400: {
        description:
          'validation-error: a malformed body, quantities not parallel to modifierIds, a variantSku not of this product',
      },
      404: { description: 'not-found: no product with that SKU' },
    },
    handler: async (ctx) => {
      const tenant = await ctx.deps.tenancy.getTenant(tenantOf(ctx).principal.tenantId);
      ctx.body = await service(ctx).validate(ctx.params.sku, validBody<ValidateRequest>(ctx), timeZoneOf(tenant));
    },
  },
  {
    method: 'get',
    path: '/products/:sku/modifiers',
    summary: "A product's modifiers configuration",
    description: 'A product never configured answers `{enabled: false, groups: []}`.',
    tags,
    auth: scopes.read,
    params: skuParam,
    responses: {
      200: { description: '`{enabled, groups[], conditions?}`' },
      400: { description: 'validation-error: a bad path parameter' },
      404: { description: 'not-found: no product with that SKU' },
    },
    handler: async (ctx) => {
      ctx.body = await service(ctx).get(ctx.params.sku);
    },
  },
  {
    method: 'put',
    path: '/products/:sku/modifiers',
    summary: "Configures a product's modifiers, replacing the whole configuration",
    description: CONFIG_NOTES,
    tags,
    auth: scopes.update,
    params: skuParam,
    body: configureSchema,
    responses: {
      200: { description: '`{sku, modifiersConfig}`' },
      400: {
        description:
          'validation-error: bad input, an unknown material or unit (field names the group and modifier), minSelections above maxSelections, exactlyOne against min/max, a variantSkus entry not of the product',
      },
      404: { description: 'not-found: no product with that SKU' },
      409: { description: 'conflict: the product kept changing while this was applied' },
    },
    handler: async (ctx) => {
      ctx.body = await service(ctx).configure(ctx.params.sku, validBody<ConfigureInput>(ctx));
    },
  },
  {
    method: 'delete',
    path: '/products/:sku/modifiers',
    summary: "Disables a product's modifiers (enabled false), keeping the groups",
    tags,
    auth: scopes.delete,
    params: skuParam,
    responses: {
      200: { description: '`{success, message}`' },
      400: { description: 'validation-error: a bad path parameter' },
      404: { description: 'not-found: no product with that SKU' },
      409: { description: 'conflict: the product kept changing while this was applied' },
    },
    handler: async (ctx) => {
      ctx.body = await service(ctx).disable(ctx.params.sku);
    },
  },
  {
    method: 'patch',
    path: '/products/:sku/modifiers/:groupId',
    summary: 'Updates one modifier group, found by its UUID',
    description:
      "Fields sent replace the stored ones; selectionRule is merged; `modifiers` replaces all of the group's modifiers (converted as in configure, with new ids); " +
      "`displayName: ''` removes the description. The group keeps its id and code.",
    tags,
    auth: scopes.update,
    params: groupParams,
    body: groupPatchSchema,
    responses: {
      200: { description: '`{sku, modifiersConfig}`' },
      400: { description: 'validation-error' },
      404: { description: 'not-found: no product with that SKU, or no group with that id in it' },
      409: { description: 'conflict: the product kept changing while this was applied' },
    },
    handler: async (ctx) => {
      ctx.body = await service(ctx).updateGroup(ctx.params.sku, ctx.params.groupId, validBody<GroupPatch>(ctx));
    },
  },
  {
    method: 'delete',
    path: '/products/:sku/modifiers/:groupId',
    summary: 'Removes one modifier group',
    description:
      'An id the product has no group of changes nothing and answers the same 200. The other groups keep their codes.',
    tags,
    auth: scopes.delete,
    params: groupParams,
    responses: {
      200: { description: '`{success, message}`' },
      400: { description: 'validation-error: a bad path parameter' },
      404: { description: 'not-found: no product with that SKU' },
      409: { description: 'conflict: the product kept changing while this was applied' },
    },
    handler: async (ctx) => {
      ctx.body = await service(ctx).deleteGroup(ctx.params.sku, ctx.params.groupId);
    },
  },
]);
