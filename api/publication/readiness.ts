import { defineRoutes } from '../route';
import { selectionOf, type ValidateBody } from './bodies';
import { validBody } from '../context';
import { publicationContext } from './context';
import { pendingFeedsInvalid, pendingFeedsQuery, validateBody, validateInvalid } from './schemas';
import { pendingFeeds, validateSelection } from '../../shared/publication/readiness';

const read = { scopes: ['products:read' as const] };

/** Before and after a publication: which products can go, which feeds are not in sync. */
export const readinessRoutes = defineRoutes([
  {
    method: 'post',
    path: '/products/export/validate',
    summary:
      'Which products can be published on a channel: published, ready, needs_review (fixable: a marketplace category — `needs categorization for <key>` —, attributes) or rejected (no image, zero price), with the reasons',
    tags: ['publication'],
    auth: read,
    body: validateBody,
    bodyRequired: false, // a missing body is the validation's own bad-request (selectionMode is required)
    invalid: validateInvalid,
    responses: {
      200: {
        description:
          '`{published[], ready[], needs_review[], rejected[]}` of `{id, sku, title, reasons[]}`, plus page, limit, total',
      },
      400: { description: 'bad-request' },
      404: { description: 'CHANNEL_NOT_FOUND' },
    },
    handler: async (ctx) => {
      const b = validBody<ValidateBody>(ctx);
      ctx.body = await validateSelection(
        publicationContext(ctx),
        b.channelId,
        selectionOf(b.selectionMode, b.skus, b.filters),
        { page: b.page, limit: b.limit },
      );
    },
  },
  {
    method: 'get',
    path: '/products/export/pending-feeds',
    summary: "A product's feeds not yet in sync on the channels of one type (destination, default walmart)",
    tags: ['publication'],
    auth: read,
    query: pendingFeedsQuery,
    invalid: pendingFeedsInvalid,
    responses: {
      200: {
        description:
          '`{feeds[{channelId, channelName, handle, status, syncStatus, lastError, lastSyncedAt}], sku, destination}`',
      },
      400: { description: 'bad-request: sku missing, an unknown destination' },
      404: { description: 'not-found' },
    },
    handler: async (ctx) => {
      const q = ctx.state.query as { sku: string; destination: string };
      // an empty destination is the default one, as before the schema
      ctx.body = await pendingFeeds(publicationContext(ctx), q.sku, q.destination || 'walmart');
    },
  },
]);
