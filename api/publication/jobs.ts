import { defineRoutes } from '../route';
import { publicationContext } from './context';
import { cancelInvalid } from './schemas';
import { cancelPublicationJob, publicationStatus } from '../../shared/publication/jobs';

const exportScope = { scopes: ['products:export' as const] };

/** One publication job: its status, its cancel. */
export const publicationJobRoutes = defineRoutes([
  {
    method: 'get',
    path: '/products/export/:jobId',
    summary: 'A publication job: status and counts (live while it runs)',
    tags: ['publication'],
    auth: exportScope,
    responses: {
      200: {
        description:
          '`{jobId, status, channelId, total, processed, published, failed, skipped, percent, cancelReason}`',
      },
      404: { description: 'not-found' },
    },
    handler: async (ctx) => {
      ctx.body = await publicationStatus(publicationContext(ctx), ctx.params.jobId);
    },
  },
  {
    method: 'post',
    path: '/products/export/:jobId/cancel',
    summary: 'Cancel a publication in progress; it stops before its next product (reason kept for audit)',
    tags: ['publication'],
    auth: exportScope,
    body: { type: 'object', additionalProperties: false, properties: { reason: { type: 'string', maxLength: 1000 } } },
    bodyRequired: false,
    invalid: cancelInvalid,
    responses: {
      200: { description: '`{success: true, message}`' },
      400: { description: 'cancel-failed: the job has finished or was cancelled' },
      404: { description: 'not-found' },
    },
    handler: async (ctx) => {
      const { reason } = ctx.request.body as { reason?: string };
      ctx.body = await cancelPublicationJob(publicationContext(ctx), ctx.params.jobId, reason ?? null);
    },
  },
]);
