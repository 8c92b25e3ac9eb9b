import { defineRoutes, type InputRule } from '../route';
import { tenantOf, validBody } from '../context';
import { Channels } from '../../shared/channels/channels';
import { AppError } from '../../shared/errors/catalog';
import { assignCategory } from '../../shared/categories/assign';
import {
  CATEGORY_ID_MAX,
  CATEGORY_NAME_MAX,
  CATEGORY_PATH_MAX_DEPTH,
  pathOf,
} from '../../shared/categories/assignment';
import { suggestCategories } from '../../shared/categories/suggest';
import type { JsonSchema } from '../../shared/validation';

export const MAX_CATEGORY_SKUS = 100;
const tags = ['marketplace-categories'];

const segment: JsonSchema = { type: 'string', pattern: '\\S', maxLength: CATEGORY_NAME_MAX };
/** A text path with more than the deepest allowed levels (`A > B > …`). */
const TOO_DEEP_TEXT = `(>[^>]*){${CATEGORY_PATH_MAX_DEPTH}}`;
/** One level of a text path as stored (trimmed): a name of 1 to CATEGORY_NAME_MAX characters, without `>`. */
const LEVEL_TEXT = `[^>\\s](?:[^>]{0,${CATEGORY_NAME_MAX - 2}}[^>\\s])?`;
/**
 * A text path whose every level has a name of at most CATEGORY_NAME_MAX characters, as the list
 * form's levels (the spaces around each `>` are not part of a name).
 */
const LEVELS_NAMED = `^\\s*${LEVEL_TEXT}(?:\\s*>\\s*${LEVEL_TEXT})*\\s*$`;

const assignBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['skus', 'channelId', 'category'],
  properties: {
    skus: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_CATEGORY_SKUS,
      items: { type: 'string', pattern: '\\S', maxLength: 100 },
      description: `product SKUs (1–${MAX_CATEGORY_SKUS}, case-insensitive; a repeated one counts once)`,
    },
    channelId: { type: 'string', pattern: '^[0-9a-fA-F]{24}$', description: 'one of the tenant’s channels' },
    category: {
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: {
        id: {
          type: 'string',
          pattern: '\\S',
          maxLength: CATEGORY_ID_MAX,
          description: 'the marketplace’s category id',
        },
        name: { type: ['string', 'null'], maxLength: CATEGORY_NAME_MAX },
        path: {
          description: `names from the root down, as a list or as text \`A > B > C\`; at most ${CATEGORY_PATH_MAX_DEPTH} levels of at most ${CATEGORY_NAME_MAX} characters`,
          oneOf: [
            { type: 'null' },
            { type: 'array', minItems: 1, maxItems: CATEGORY_PATH_MAX_DEPTH, items: segment },
            {
              type: 'string',
              maxLength: CATEGORY_PATH_MAX_DEPTH * (CATEGORY_NAME_MAX + 3),
              pattern: LEVELS_NAMED,
              not: { type: 'string', pattern: TOO_DEEP_TEXT },
            },
          ],
        },
      },
    },
    operationName: { type: 'string', maxLength: 200, description: 'label in the bulk operations history' },
  },
};

const rule = (field: string, keyword: string | string[] | undefined, code: string, message: string): InputRule => ({
  field,
  ...(keyword ? { keyword } : {}),
  code,
  message,
});

/** The spec's codes, the more specific first: each names what was wrong with the request as a whole. */
const assignRules: InputRule[] = [
  rule('(body)', 'type', 'invalid-skus', 'A JSON object with skus, channelId and category is required'),
  rule('skus', 'maxItems', 'too-many-skus', `At most ${MAX_CATEGORY_SKUS} SKUs per request`),
  rule('skus.*', undefined, 'invalid-sku-values', 'Every SKU must be a non-empty text of at most 100 characters'),
  rule('skus', undefined, 'invalid-skus', `skus must be a list of 1 to ${MAX_CATEGORY_SKUS} SKUs`),
  rule('channelId', undefined, 'invalid-channel-id', 'channelId must be the id of one of your channels'),
  rule('category.id', 'maxLength', 'category-id-too-long', `category.id is longer than ${CATEGORY_ID_MAX} characters`),
  rule(
    'category.name',
    'maxLength',
    'category-name-too-long',
    `category.name is longer than ${CATEGORY_NAME_MAX} characters`,
  ),
  rule(
    'category.path',
    ['maxItems', 'not'],
    'category-path-too-deep',
    `category.path has more than ${CATEGORY_PATH_MAX_DEPTH} levels`,
  ),
  rule(
    'category.path.**',
    undefined,
    'invalid-category-path',
    `category.path must list names from the root down (each at most ${CATEGORY_NAME_MAX} characters), as a list or as text "A > B"`,
  ),
  rule('category.**', undefined, 'invalid-category', 'category must be {id, name?, path?} with a non-empty id'),
  rule('category', undefined, 'invalid-category', 'category must be {id, name?, path?} with a non-empty id'),
];

const suggestQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['channelId'],
  properties: {
    channelId: { type: 'string', minLength: 1, description: 'one of the tenant’s channels' },
    title: { type: 'string', pattern: '\\S', maxLength: 500, description: 'the text to categorize' },
    q: { type: 'string', pattern: '\\S', maxLength: 500, description: 'the same as title (the spec’s name for it)' },
    sku: { type: 'string', pattern: '\\S', maxLength: 100, description: 'a product whose title is categorized' },
    limit: { type: 'integer', minimum: 1, maximum: 10, default: 5 },
  },
  anyOf: [{ required: ['title'] }, { required: ['q'] }, { required: ['sku'] }],
};

interface AssignBody {
  skus: string[];
  channelId: string;
  category: { id: string; name?: string | null; path?: string | string[] | null };
  operationName?: string;
}

export const categoryRoutes = defineRoutes([
  {
    method: 'post',
    path: '/products/marketplace-categories',
    summary: 'Assign a marketplace category to products for a channel',
    description: [
      `Writes \`category\` to each product of \`skus\` (1–${MAX_CATEGORY_SKUS}) as a metafield of namespace \`mkt_category\`, key`,
      '`<channelType>:<siteId>`: the site is the channel’s `settings.siteId`, else its type’s default (mercadolibre `MLM`,',
      't1 `SR`, amazon `MX`, walmart `MX`; `default` for types without a site). The value is',
      '`{id, name, path, source: "manual", channelId, assignedAt}`; a product that already has this very category keeps it untouched.',
      '',
      '200 when every SKU was assigned, 207 otherwise; both answer `{success, channelId, channelType, metafieldKey, category,',
      'operationId, assigned, unchanged, failed, results[{sku, success, error?}]}`. A SKU that is unknown, another tenant’s, a',
      'variant’s, a material’s or a supply’s is `Product not found`. The change is one bulk operation (type',
      '`marketplace-category`; `operationId`, null when nothing changed) that `POST /products/bulk/operations/{id}/rollback` undoes.',
      '',
      'Refusals of the request (400): invalid-skus, too-many-skus, invalid-sku-values, invalid-channel-id (also a channel the',
      `tenant does not have), invalid-category, invalid-category-path, category-id-too-long (${CATEGORY_ID_MAX}),`,
      `category-name-too-long (${CATEGORY_NAME_MAX}), category-path-too-deep (${CATEGORY_PATH_MAX_DEPTH} levels); an unknown member: validation-error.`,
    ].join('\n'),
    tags,
    auth: { scopes: ['products:update'] },
    body: assignBody,
    invalid: { code: 'validation-error', rules: assignRules },
    responses: {
      200: { description: 'every SKU assigned' },
      207: { description: 'some SKUs not assigned: see results' },
    },
    handler: async (ctx) => {
      const { tenantDb, principal } = tenantOf(ctx);
      const body = validBody<AssignBody>(ctx);
      const channel = await new Channels(tenantDb, ctx.deps.config.secretsKey).get(body.channelId);
      if (!channel)
        throw new AppError(400, 'invalid-channel-id', `No channel ${body.channelId} in this tenant`, {
          field: 'channelId',
        });
      const out = await assignCategory(tenantDb, {
        channel,
        skus: body.skus,
        category: { id: body.category.id, name: body.category.name, path: pathOf(body.category.path) },
        source: 'manual',
        actor: principal.keyId,
        operationName: body.operationName,
      });
      ctx.status = out.failed ? 207 : 200;
      ctx.body = {
        success: out.failed === 0,
        channelId: channel._id.toHexString(),
        channelType: out.site.channelType,
        metafieldKey: out.site.key,
        category: out.category,
        operationId: out.operationId,
        assigned: out.assigned,
        unchanged: out.unchanged,
        failed: out.failed,
        results: out.results,
      };
    },
  },
  {
    method: 'get',
    path: '/products/categories/suggest',
    summary: 'Category suggestions from a channel’s marketplace predictor',
    description: [
      'Asks the channel’s predictor for the categories of `title` (or `q`), or of the title of the product `sku` (with both, `title` is',
      'asked and `current` still says what the product has). Mercado Libre channels are asked with Mercado Libre’s',
      '`GET /sites/{site_id}/domain_discovery/search?q=&limit=`; every other type with the generic connector’s',
      '`GET {endpointUrl}/categories/suggest?q=&site=&limit=` answering `{suggestions[{categoryId, categoryName, path?, domainId?, domainName?}]}`;',
      'both signed like the connector’s other calls and held to the channel’s rate limit and timeout.',
      '',
      'Answers `{channelId, channelType, siteId, metafieldKey, title, sku?, current?, suggestions[{categoryId, categoryName, path,',
      'domainId, domainName}]}`, best first (an empty list: nothing fits). 400 MISSING_PARAMETER without channelId, or without both',
      'title and sku; 404 CHANNEL_NOT_FOUND, PRODUCT_NOT_FOUND; 503 PREDICTOR_THROTTLED (with Retry-After) when the channel keeps',
      'answering 429; 502 PREDICTOR_UNAVAILABLE (unreachable, too slow, 5xx), PREDICTOR_REFUSED (another 4xx),',
      'PREDICTOR_UNSUPPORTED (the channel has no predictor: 404 or 501), PREDICTOR_BAD_RESPONSE (an answer we cannot read).',
    ].join('\n'),
    tags,
    auth: { scopes: ['products:read'] },
    query: suggestQuery,
    invalid: {
      code: 'INVALID_PARAMETER',
      rules: [
        {
          keyword: 'required',
          code: 'MISSING_PARAMETER',
          message: (f) =>
            f.field === 'channelId'
              ? 'channelId is required'
              : 'title (or q) or sku is required: the text to categorize',
        },
      ],
    },
    responses: {
      200: { description: 'the suggestions, best first' },
      404: { description: 'CHANNEL_NOT_FOUND (no such channel), PRODUCT_NOT_FOUND (no product with sku)' },
      502: {
        description: 'the channel’s predictor failed: PREDICTOR_UNAVAILABLE, _REFUSED, _UNSUPPORTED, _BAD_RESPONSE',
      },
      503: { description: 'PREDICTOR_THROTTLED: the channel keeps answering 429; Retry-After says when to ask again' },
    },
    handler: async (ctx) => {
      const q = ctx.state.query as { channelId: string; title?: string; q?: string; sku?: string; limit: number };
      ctx.body = await suggestCategories(tenantOf(ctx).tenantDb, ctx.deps.config.secretsKey, {
        ...q,
        title: q.title ?? q.q,
      });
    },
  },
]);
