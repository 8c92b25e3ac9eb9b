import { defineRoutes } from '../route';
import { publicationContext } from './context';
import { selectionOf, type PublishBody } from './bodies';
import { idempotencyKeyOf, validBody } from '../context';
import { publishBody, publishInvalid } from './schemas';
import { recentPublications, RECENT_PUBLICATIONS } from '../../shared/publication/jobs';
import { OPTION_DEFAULTS } from '../../shared/publication/publication';
import { startPublication } from '../../shared/publication/start';

const exportScope = { scopes: ['products:export' as const] };

/** Publication: start one, list the recent ones. */
export const publishRoutes = defineRoutes([
  {
    method: 'post',
    path: '/products/export',
    idempotency: 'bound',
    summary: 'Publish products to a sales channel',
    description:
      'mode single | selected | filtered | all (or the legacy selectionMode); productIds are ids or SKUs. Up to PUBLISH_SYNC_MAX products answer 201 {results[{sku, success, error?}]} once done (400 PRODUCT_EXPORT_FAILED when one or more failed); larger selections answer 202 {jobId: "exp_…", metadata: {async: true}}. Both run as the same workflow. One publication per channel at a time (409 EXPORT_IN_PROGRESS). An Idempotency-Key makes a retry answer the same job.',
    tags: ['publication'],
    auth: exportScope,
    body: publishBody,
    bodyRequired: false, // a missing body is the publication's own bad-request (channelId is required)
    invalid: publishInvalid,
    responses: {
      201: { description: '`{jobId, results[{sku, success, error?}]}`' },
      202: { description: '`{jobId, metadata: {async: true}}`' },
      400: { description: 'bad-request, CHANNEL_INACTIVE, NO_PRODUCTS, PRODUCT_EXPORT_FAILED' },
      404: { description: 'CHANNEL_NOT_FOUND, not-found/location' },
      409: { description: 'EXPORT_IN_PROGRESS' },
    },
    handler: async (ctx) => {
      const b = validBody<PublishBody>(ctx);
      const answer = await startPublication(publicationContext(ctx), {
        channelId: b.channelId,
        selection: selectionOf((b.mode ?? b.selectionMode)!, b.productIds, b.filters),
        options: { ...OPTION_DEFAULTS, ...b.options },
        targetMarketplaces: b.targetMarketplaces ?? [],
        idempotencyKey: idempotencyKeyOf(ctx),
      });
      if (answer.async) {
        ctx.status = 202;
        ctx.body = { jobId: answer.jobId, metadata: { async: true } };
      } else {
        ctx.status = 201;
        ctx.body = { jobId: answer.jobId, results: answer.results };
      }
    },
  },
  {
    method: 'get',
    path: '/products/export',
    summary: `The tenant's ${RECENT_PUBLICATIONS} most recent publications, newest first (no paging)`,
    tags: ['publication'],
    auth: exportScope,
    responses: { 200: { description: '`{jobs[]}`' } },
    handler: async (ctx) => {
      ctx.body = { jobs: await recentPublications(publicationContext(ctx)) };
    },
  },
]);
