import { defineRoutes } from '../route';
import { tenantOf, type AppContext } from '../context';
import { Channels, type ChannelDoc } from '../../shared/channels/channels';
import { listChannelProducts } from '../../shared/channels/connector';
import { resolveChannelType } from '../../shared/channels/channel-types';
import { AppError } from '../../shared/errors/catalog';
import { Locations } from '../../shared/locations/locations';
import { stockOf, skusOfProduct } from '../../shared/inventory/stock-view';
import { jobs, type JobRecord } from '../../shared/jobs/collection';
import { products } from '../../shared/products/collections';
import { presentListItem } from '../../shared/products/present';
import { buildFilter, filtersFrom, type ProductFilters } from '../../shared/products/query';
import { MAX_PAGE, PAGE_PARAM, compile, summarize, toFieldErrors } from '../../shared/validation';
import type { ProductDoc } from '../../shared/products/types';
import {
  lockChannel,
  OPTION_DEFAULTS,
  productsByIds,
  PUBLICATION_JOB,
  publishProblems,
  resolveSelection,
  selectionPage,
  MAX_PUBLICATION_PRODUCTS,
  type PublishOptions,
  type SelectionMode,
} from '../../shared/publication/publication';
import {
  cancelPublication,
  publication,
  publicationProgress,
  type PublicationProgress,
} from '../../shared/publication/messages';
import { workflowHandle } from '../../shared/temporal/workflows';

const exportScope = { scopes: ['products:export' as const] };
const read = { scopes: ['products:read' as const] };
const MODES: SelectionMode[] = ['single', 'selected', 'filtered', 'all'];
const LEGACY_MODES = ['selected', 'filtered', 'all'];
const BATCH_SIZE = 25;
const FINAL = ['completed', 'failed', 'cancelled'];

function badRequest(message: string, field?: string): AppError {
  return new AppError(400, 'bad-request', message, field ? { field } : {});
}

async function channelOf(ctx: AppContext, id: unknown): Promise<ChannelDoc> {
  if (typeof id !== 'string' || !id) throw badRequest('channelId is required', 'channelId');
  const channel = await new Channels(tenantOf(ctx).tenantDb, ctx.deps.config.secretsKey).get(id);
  if (!channel) throw new AppError(404, 'CHANNEL_NOT_FOUND', `No channel ${id} in this tenant`, { field: 'channelId' });
  return channel;
}

function optionsOf(raw: unknown): PublishOptions {
  if (raw === undefined) return { ...OPTION_DEFAULTS };
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('options must be an object', 'options');
  const o = raw as Record<string, unknown>;
  const out: PublishOptions = { ...OPTION_DEFAULTS };
  for (const [k, v] of Object.entries(o)) {
    if (k === 'locationId') {
      if (typeof v !== 'string' || !v)
        throw badRequest('options.locationId must be a location id', 'options.locationId');
      out.locationId = v;
    } else if (k in OPTION_DEFAULTS) {
      if (typeof v !== 'boolean') throw badRequest(`options.${k} must be true or false`, `options.${k}`);
      (out as unknown as Record<string, boolean>)[k] = v;
    } else {
      throw badRequest(
        `Unknown option ${k}; accepted: ${[...Object.keys(OPTION_DEFAULTS), 'locationId'].join(', ')}`,
        `options.${k}`,
      );
    }
  }
  return out;
}

/** The selection of a request: `mode`, or the legacy `selectionMode` (both may come; they must agree). */
function modeOf(b: Record<string, unknown>, required = true): SelectionMode {
  const mode = b.mode;
  const legacy = b.selectionMode;
  if (mode !== undefined && (typeof mode !== 'string' || !MODES.includes(mode as SelectionMode)))
    throw badRequest(`mode must be one of ${MODES.join(', ')}`, 'mode');
  if (legacy !== undefined && (typeof legacy !== 'string' || !LEGACY_MODES.includes(legacy)))
    throw badRequest(`selectionMode must be one of ${LEGACY_MODES.join(', ')}`, 'selectionMode');
  if (mode !== undefined && legacy !== undefined && mode !== legacy)
    throw badRequest('mode and selectionMode disagree; send one of them', 'selectionMode');
  const chosen = (mode ?? legacy) as SelectionMode | undefined;
  if (!chosen) {
    if (required) throw badRequest(`mode (or selectionMode) is required: one of ${MODES.join(', ')}`, 'mode');
    return 'all';
  }
  return chosen;
}

function idsOf(b: Record<string, unknown>, field: string, mode: SelectionMode): string[] | undefined {
  const ids = b[field];
  if (mode !== 'selected' && mode !== 'single') return undefined;
  if (!Array.isArray(ids) || ids.length === 0 || ids.some((x) => typeof x !== 'string' || !x))
    throw badRequest(`${field} (ids or SKUs) is required when the mode is ${mode}`, field);
  if (mode === 'single' && ids.length !== 1)
    throw badRequest(`mode single publishes exactly one product; ${field} has ${ids.length}`, field);
  if (ids.length > MAX_PUBLICATION_PRODUCTS)
    throw badRequest(`at most ${MAX_PUBLICATION_PRODUCTS} products per publication`, field);
  return ids as string[];
}

// the catalog's filters, each list given as an array or comma-separated
const list = {
  anyOf: [
    { type: 'string', maxLength: 2000 },
    { type: 'array', maxItems: 500, items: { type: 'string', maxLength: 500 } },
  ],
};
const FILTERS: Record<string, object> = {
  q: { type: 'string', maxLength: 200 },
  status: list,
  category: { type: 'string', maxLength: 1000 },
  brands: list,
  minPrice: { type: 'number', minimum: 0 },
  maxPrice: { type: 'number', minimum: 0 },
  tags: list,
  channelId: { type: 'string', maxLength: 100 },
};
const validFilters = compile({ type: 'object', properties: FILTERS });

function filtersOf(b: Record<string, unknown>, mode: SelectionMode): ProductFilters | undefined {
  if (mode !== 'filtered') return undefined;
  const f = b.filters;
  if (!f || typeof f !== 'object' || Array.isArray(f) || !Object.keys(f).length)
    throw badRequest('filters is required when the mode is filtered', 'filters');
  const allowed = Object.keys(FILTERS);
  const unknown = Object.keys(f).filter((k) => !allowed.includes(k));
  if (unknown.length)
    throw badRequest(`Unknown filter(s): ${unknown.join(', ')}; accepted: ${allowed.join(', ')}`, 'filters');
  // typed before they reach a query: an object here would be a query operator, a number a crash;
  // a null filter is no filter, as before
  const given = Object.fromEntries(Object.entries(f).filter(([, v]) => v !== null));
  if (!validFilters(given)) {
    const fieldErrors = toFieldErrors(validFilters.errors, 'filters');
    throw badRequest(`Invalid filters: ${summarize(fieldErrors)}`, fieldErrors[0]?.field ?? 'filters');
  }
  return filtersFrom(given);
}

function presentJob(job: JobRecord, progress?: PublicationProgress | null) {
  const r = (job.result ?? {}) as Record<string, unknown>;
  const live = progress && !FINAL.includes(job.status) ? progress : null;
  return {
    jobId: job._id,
    status: live ? live.status : job.status,
    channelId: job.input.channelId,
    mode: job.input.mode,
    total: live?.total ?? r.total ?? job.input.count ?? null,
    processed: live?.processed ?? r.processed ?? 0,
    published: live?.published ?? r.published ?? 0,
    failed: live?.failed ?? r.failed ?? 0,
    skipped: live?.skipped ?? r.skipped ?? 0,
    percent: live?.percent ?? (FINAL.includes(job.status) ? 100 : 0),
    cancelReason: live?.cancelReason ?? r.cancelReason ?? null,
    createdAt: job.createdAt,
    finishedAt: job.finishedAt,
  };
}

async function findJob(ctx: AppContext): Promise<JobRecord> {
  const job = await ctx.deps.jobs.get(tenantOf(ctx).tenantDb, ctx.params.jobId, PUBLICATION_JOB);
  if (!job) throw new AppError(404, 'not-found', `No publication job ${ctx.params.jobId}`);
  return ctx.deps.jobs.settle(tenantOf(ctx).tenantDb, job);
}

/** page (0-based, as the spec's retail-group listings), limit (default 20), search. */
function groupPaging(q: Record<string, unknown>) {
  const page = q.page === undefined ? 0 : Number(q.page);
  const limit = q.limit === undefined ? 20 : Number(q.limit);
  if (!Number.isInteger(page) || page < 0 || page > MAX_PAGE)
    throw new AppError(400, 'bad-request', `page must be a whole number from 0 to ${MAX_PAGE}`, { field: 'page' });
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new AppError(400, 'bad-request', 'limit must be 1 to 100', { field: 'limit' });
  return { page, limit, search: typeof q.search === 'string' && q.search ? q.search : undefined };
}

async function retailGroupChannel(ctx: AppContext): Promise<ChannelDoc> {
  const channel = await new Channels(tenantOf(ctx).tenantDb, ctx.deps.config.secretsKey).get(ctx.params.channelId);
  if (!channel) throw new AppError(404, 'channel-not-found', `No channel ${ctx.params.channelId} in this tenant`);
  if (resolveChannelType(channel.type)?.id !== 't1')
    throw new AppError(
      400,
      'invalid-channel-type',
      `Channel ${ctx.params.channelId} is a ${channel.type} channel; these reads are for the retail-group (t1) channel type`,
    );
  return channel;
}

const boundFilter = (channelId: string) => ({ 'bindings.channelId': channelId }) as never;

async function channelCatalog(ctx: AppContext) {
  const channel = await retailGroupChannel(ctx);
  const { page, limit, search } = groupPaging(ctx.query as Record<string, unknown>);
  const channels = new Channels(tenantOf(ctx).tenantDb, ctx.deps.config.secretsKey);
  const res = await listChannelProducts(
    {
      endpointUrl: channel.settings.endpointUrl,
      secret: channels.signingSecret(channel),
      timeoutMs: channel.settings.timeoutMs ?? 15_000,
    },
    { page, limit, search },
  );
  if (!res.ok) {
    ctx.deps.log.warn({ channelId: ctx.params.channelId, message: res.message }, 'retail-group API failed');
    throw new AppError(
      500,
      res.kind === 'unreachable' ? 't1-integration-error' : 't1-api-error',
      `The retail group's API failed: ${res.message}`,
    );
  }
  const body = res.body as { products?: unknown; items?: unknown } | unknown[];
  const list = (
    Array.isArray(body)
      ? body
      : Array.isArray(body.products)
        ? body.products
        : Array.isArray(body.items)
          ? body.items
          : []
  ) as Record<string, unknown>[];
  // sync status: what our binding to this channel says about the product behind each of theirs
  const ours = await tenantOf(ctx)
    .tenantDb.collection(products)
    .find(boundFilter(channel._id.toHexString()), { projection: { sku: 1, bindings: 1 } })
    .toArray();
  const byHandle = new Map<string, { sku: string; syncStatus: string }>();
  for (const p of ours as ProductDoc[]) {
    const b = (p.bindings as unknown as { channelId: string; handle: string; syncStatus?: string }[]).find(
      (x) => x.channelId === channel._id.toHexString(),
    );
    if (b) byHandle.set(String(b.handle), { sku: p.sku, syncStatus: b.syncStatus ?? 'pending' });
  }
  ctx.body = {
    products: list.map((item) => {
      const handle = String(item.handle ?? item.id ?? item.sku ?? '');
      const mine = byHandle.get(handle) ?? byHandle.get(String(item.sku ?? ''));
      return { ...item, sku: item.sku ?? mine?.sku ?? null, syncStatus: mine?.syncStatus ?? 'unlinked' };
    }),
    page,
    limit,
  };
}

export const publicationRoutes = defineRoutes([
  {
    method: 'post',
    path: '/products/export',
    summary: 'Publish products to a sales channel',
    description:
      'mode single | selected | filtered | all (or the legacy selectionMode); productIds are ids or SKUs. Up to PUBLISH_SYNC_MAX products answer 201 {results[{sku, success, error?}]} once done (400 PRODUCT_EXPORT_FAILED when one or more failed); larger selections answer 202 {jobId: "exp_…", metadata: {async: true}}. Both run as the same workflow. One publication per channel at a time (409 EXPORT_IN_PROGRESS). An Idempotency-Key makes a retry answer the same job.',
    tags: ['publication'],
    auth: exportScope,
    body: {
      type: 'object',
      required: ['channelId'],
      properties: {
        channelId: { type: 'string' },
        mode: { type: 'string', enum: MODES },
        selectionMode: { type: 'string', enum: LEGACY_MODES },
        productIds: { type: 'array', items: { type: 'string' }, maxItems: MAX_PUBLICATION_PRODUCTS },
        filters: { type: 'object' },
        targetMarketplaces: { type: 'array', items: { type: 'string' } },
        options: {
          type: 'object',
          properties: {
            enableCategorization: { type: 'boolean', default: true },
            forceRecategorization: { type: 'boolean', default: false },
            includeInventory: { type: 'boolean', default: true },
            includeVariants: { type: 'boolean', default: true },
            forceUpdate: { type: 'boolean', default: false },
            locationId: { type: 'string' },
          },
        },
      },
    },
    bodyValidation: 'handler',
    bodyRequired: false, // the handler answers a missing body with the publication's own bad-request
    responses: {
      201: { description: '`{jobId, results[{sku, success, error?}]}`' },
      202: { description: '`{jobId, metadata: {async: true}}`' },
      400: { description: 'bad-request, CHANNEL_INACTIVE, NO_PRODUCTS, PRODUCT_EXPORT_FAILED' },
      404: { description: 'CHANNEL_NOT_FOUND' },
      409: { description: 'EXPORT_IN_PROGRESS' },
    },
    handler: async (ctx) => {
      const { tenantDb } = tenantOf(ctx);
      const b = ctx.request.body as Record<string, unknown>;
      if (!b || typeof b !== 'object' || Array.isArray(b)) throw badRequest('A JSON object body is required');
      const allowed = ['channelId', 'mode', 'selectionMode', 'productIds', 'filters', 'targetMarketplaces', 'options'];
      const unknown = Object.keys(b).filter((k) => !allowed.includes(k));
      if (unknown.length) throw badRequest(`Unknown field(s): ${unknown.join(', ')}`, unknown[0]);
      if (typeof b.channelId !== 'string' || !b.channelId) throw badRequest('channelId is required', 'channelId');
      const mode = modeOf(b);
      const productIds = idsOf(b, 'productIds', mode);
      const filters = filtersOf(b, mode);
      const options = optionsOf(b.options);
      const targetMarketplaces = b.targetMarketplaces ?? [];
      if (!Array.isArray(targetMarketplaces) || targetMarketplaces.some((m) => typeof m !== 'string'))
        throw badRequest('targetMarketplaces must be a list of texts', 'targetMarketplaces');
      const channel = await channelOf(ctx, b.channelId);
      if (channel.status !== 'active')
        throw new AppError(400, 'CHANNEL_INACTIVE', `Channel ${b.channelId} is ${channel.status}`, {
          field: 'channelId',
        });
      // stock is read at this location: an unknown one would publish 0 for every product
      if (options.locationId) await new Locations(tenantDb).require(options.locationId);
      const ids = await resolveSelection(tenantDb, mode, productIds, filters);
      if (!ids.length) throw new AppError(400, 'NO_PRODUCTS', 'The selection resolved no products');
      const sync = ids.length <= ctx.deps.config.publishSyncMax;
      const channelId = channel._id.toHexString();
      const { job } = await ctx.deps.jobs.start(tenantDb, {
        type: PUBLICATION_JOB,
        prefix: 'exp',
        workflow: publication,
        idempotencyKey: ctx.get('idempotency-key') || undefined,
        input: { channelId, mode, count: ids.length, sync },
        beforeStart: (jobId) =>
          lockChannel(tenantDb, channelId, jobId, (holder) => ctx.deps.jobs.settle(tenantDb, holder)),
        workflowInput: (jobId) => ({
          tenantId: tenantDb.tenantId,
          jobId,
          channelId,
          productIds: ids,
          options,
          targetMarketplaces: targetMarketplaces as string[],
          batchSize: BATCH_SIZE,
          collectResults: sync,
        }),
      });
      if (!job.input.sync) {
        ctx.status = 202;
        ctx.body = { jobId: job._id, metadata: { async: true } };
        return;
      }
      const result = await workflowHandle(ctx.deps.temporal, publication, job.workflowId).result();
      if (result.status === 'failed')
        throw new AppError(
          400,
          'PRODUCT_EXPORT_FAILED',
          `The publication failed: ${result.error ?? 'the channel could not be reached'}`,
          { details: { jobId: job._id, results: result.results } },
        );
      if (result.failed > 0)
        throw new AppError(
          400,
          'PRODUCT_EXPORT_FAILED',
          `${result.failed} of ${result.results.length} products failed to publish`,
          { details: { jobId: job._id, results: result.results } },
        );
      ctx.status = 201;
      ctx.body = { jobId: job._id, results: result.results };
    },
  },
  {
    method: 'get',
    path: '/products/export',
    summary: "The tenant's 20 most recent publications, newest first (no paging)",
    tags: ['publication'],
    auth: exportScope,
    responses: { 200: { description: '`{jobs[]}`' } },
    handler: async (ctx) => {
      const rows = await tenantOf(ctx)
        .tenantDb.collection(jobs)
        .find({ type: PUBLICATION_JOB }, { sort: { createdAt: -1, _id: -1 }, limit: 20 })
        .toArray();
      ctx.body = { jobs: rows.map((j) => presentJob(j)) };
    },
  },
  {
    method: 'post',
    path: '/products/export/validate',
    summary:
      'Which products can be published on a channel: published, ready, needs_review (fixable: category, attributes) or rejected (no image, zero price), with the reasons',
    tags: ['publication'],
    auth: read,
    body: {
      type: 'object',
      required: ['channelId', 'selectionMode'],
      properties: {
        channelId: { type: 'string' },
        selectionMode: { type: 'string', enum: LEGACY_MODES },
        skus: { type: 'array', items: { type: 'string' } },
        filters: { type: 'object' },
        page: PAGE_PARAM,
        limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
      },
    },
    bodyValidation: 'handler',
    bodyRequired: false, // a missing body is the handler's bad-request (selectionMode is required)
    responses: {
      200: {
        description:
          '`{published[], ready[], needs_review[], rejected[]}` of `{id, sku, title, reasons[]}`, plus page, limit, total',
      },
      400: { description: 'bad-request' },
      404: { description: 'CHANNEL_NOT_FOUND' },
    },
    handler: async (ctx) => {
      const { tenantDb } = tenantOf(ctx);
      const b = (ctx.request.body ?? {}) as Record<string, unknown>;
      if (b.selectionMode === undefined)
        throw badRequest('selectionMode is required: all, selected or filtered', 'selectionMode');
      const mode = modeOf({ selectionMode: b.selectionMode });
      const channel = await channelOf(ctx, b.channelId);
      const page = b.page === undefined ? 1 : Number(b.page);
      const limit = b.limit === undefined ? 50 : Number(b.limit);
      if (!Number.isInteger(page) || page < 1 || page > MAX_PAGE)
        throw badRequest(`page must be a whole number from 1 to ${MAX_PAGE}`, 'page');
      if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw badRequest('limit must be 1 to 200', 'limit');
      const { docs, total } = await selectionPage(
        tenantDb,
        mode,
        idsOf(b, 'skus', mode),
        filtersOf(b, mode),
        page,
        limit,
      );
      const out = {
        published: [] as unknown[],
        ready: [] as unknown[],
        needs_review: [] as unknown[],
        rejected: [] as unknown[],
        page,
        limit,
        total,
      };
      const type = resolveChannelType(channel.type)?.id ?? channel.type;
      for (const p of docs) {
        const entry = { id: p._id.toHexString(), sku: p.sku, title: p.title?.value ?? null };
        const binding = (p.bindings as unknown as { channelId: string; syncStatus?: string }[]).find(
          (x) => x.channelId === channel._id.toHexString(),
        );
        const problems = publishProblems(p, type);
        if (binding?.syncStatus === 'synced' && !problems.length) out.published.push({ ...entry, reasons: [] });
        else if (problems.some((x) => x === 'no image' || x === 'zero price'))
          out.rejected.push({ ...entry, reasons: problems });
        else if (problems.length) out.needs_review.push({ ...entry, reasons: problems });
        else out.ready.push({ ...entry, reasons: [] });
      }
      ctx.body = out;
    },
  },
  {
    method: 'get',
    path: '/products/export/pending-feeds',
    summary: "A product's feeds not yet in sync on the channels of one type (destination, default walmart)",
    tags: ['publication'],
    auth: read,
    responses: {
      200: {
        description:
          '`{feeds[{channelId, channelName, handle, status, syncStatus, lastError, lastSyncedAt}], sku, destination}`',
      },
      400: { description: 'bad-request: sku missing' },
      404: { description: 'not-found' },
    },
    handler: async (ctx) => {
      const { tenantDb } = tenantOf(ctx);
      const q = ctx.query as Record<string, unknown>;
      if (typeof q.sku !== 'string' || !q.sku.trim()) throw badRequest('sku is required', 'sku');
      const destination = typeof q.destination === 'string' && q.destination ? q.destination : 'walmart';
      const type = resolveChannelType(destination);
      if (!type) throw badRequest(`Unknown destination ${destination}`, 'destination');
      const sku = q.sku.trim().toUpperCase();
      const [p] = await resolveSelection(tenantDb, 'selected', [sku], undefined).catch(() => {
        throw new AppError(404, 'not-found', `No product with SKU ${sku}`);
      });
      const [doc] = await productsByIds(tenantDb, [p]);
      const channels = new Channels(tenantDb, ctx.deps.config.secretsKey);
      const feeds = [];
      for (const b of doc.bindings as unknown as {
        channelId: string;
        handle: string;
        status?: string;
        syncStatus?: string;
        lastError?: string | null;
        lastSyncedAt?: string | null;
      }[]) {
        const channel = await channels.get(b.channelId);
        if (!channel || resolveChannelType(channel.type)?.id !== type.id || b.syncStatus === 'synced') continue;
        feeds.push({
          channelId: b.channelId,
          channelName: channel.name,
          handle: b.handle,
          status: b.status ?? 'pending',
          syncStatus: b.syncStatus ?? 'pending',
          lastError: b.lastError ?? null,
          lastSyncedAt: b.lastSyncedAt ?? null,
        });
      }
      ctx.body = { feeds, sku, destination };
    },
  },
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
      const job = await findJob(ctx);
      let progress: PublicationProgress | null = null;
      if (!FINAL.includes(job.status))
        progress = await ctx.deps.temporal.workflow
          .getHandle(job.workflowId)
          .query(publicationProgress)
          .catch(() => null);
      ctx.body = presentJob(job, progress);
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
    responses: {
      200: { description: '`{success: true, message}`' },
      400: { description: 'cancel-failed: the job has finished or was cancelled' },
      404: { description: 'not-found' },
    },
    handler: async (ctx) => {
      const job = await findJob(ctx);
      if (FINAL.includes(job.status))
        throw new AppError(
          400,
          'cancel-failed',
          `The publication is ${job.status}; only a publication in progress can be cancelled`,
        );
      const reason = (ctx.request.body as { reason?: string }).reason ?? null;
      // recorded first: the batch under way reads it before each product, so nothing is sent after this answer;
      // guarded: a second cancel finds the job already being cancelled
      const first = await tenantOf(ctx)
        .tenantDb.collection(jobs)
        .updateOne({ _id: job._id, cancelRequestedAt: null }, { $set: { cancelRequestedAt: new Date() } });
      if (first.matchedCount === 0)
        throw new AppError(400, 'cancel-failed', 'The publication is already being cancelled');
      try {
        await ctx.deps.temporal.workflow.getHandle(job.workflowId).signal(cancelPublication, { reason });
      } catch {
        throw new AppError(400, 'cancel-failed', 'The publication has already ended');
      }
      ctx.body = {
        success: true,
        message: `Publication ${job._id} is being cancelled; it stops before its next product`,
      };
    },
  },
  {
    method: 'get',
    path: '/products/channel/:channelId/catalog',
    summary: "Retail group: the channel's own catalog (its API), each product with its sync status here",
    tags: ['publication'],
    auth: read,
    responses: {
      200: { description: '`{products[{…, syncStatus}], page, limit}`' },
      400: { description: 'invalid-channel-type' },
      404: { description: 'channel-not-found' },
      500: { description: 't1-integration-error (unreachable), t1-api-error (it answered an error)' },
    },
    handler: channelCatalog,
  },
  {
    method: 'get',
    path: '/products/channel/:channelId/t1',
    summary: 'The path the spec gives for the retail-group catalog read (same as …/catalog)',
    tags: ['publication'],
    auth: read,
    handler: channelCatalog,
  },
  {
    method: 'get',
    path: '/products/channel/:channelId/bound',
    summary: 'Retail group: our products already bound to the channel',
    tags: ['publication'],
    auth: read,
    responses: {
      200: { description: '`{products, page, limit, total}`' },
      400: { description: 'invalid-channel-type' },
      404: { description: 'channel-not-found' },
    },
    handler: async (ctx) => {
      const channel = await retailGroupChannel(ctx);
      const { page, limit, search } = groupPaging(ctx.query as Record<string, unknown>);
      const filter = {
        $and: [boundFilter(channel._id.toHexString()), search ? buildFilter({ q: search }).filter : {}],
      };
      const col = tenantOf(ctx).tenantDb.collection(products);
      const [docs, total] = await Promise.all([
        col.find(filter as never, { sort: { createdAt: -1, _id: -1 }, skip: page * limit, limit }).toArray(),
        col.countDocuments(filter as never),
      ]);
      ctx.body = {
        products: docs.map((d) => presentListItem(d as ProductDoc, new Set(['bindings']))),
        page,
        limit,
        total,
      };
    },
  },
  {
    method: 'get',
    path: '/products/channel/:channelId/eligible',
    summary:
      'Retail group: every active product that could be published on the channel, with hasBinding; inStock=true keeps those with stock',
    tags: ['publication'],
    auth: read,
    responses: {
      200: { description: '`{products[{…, hasBinding, stock}], page, limit, total}`' },
      400: { description: 'invalid-channel-type' },
      404: { description: 'channel-not-found' },
    },
    handler: async (ctx) => {
      const channel = await retailGroupChannel(ctx);
      const { tenantDb } = tenantOf(ctx);
      const q = ctx.query as Record<string, unknown>;
      const { page, limit, search } = groupPaging(q);
      if (q.inStock !== undefined && q.inStock !== 'true' && q.inStock !== 'false')
        throw new AppError(400, 'bad-request', 'inStock must be true or false', { field: 'inStock' });
      const filter = buildFilter({ status: ['active'], ...(search ? { q: search } : {}) }).filter;
      const docs = (await tenantDb
        .collection(products)
        .find(filter, { sort: { createdAt: -1, _id: -1 } })
        .toArray()) as ProductDoc[];
      const stock = await stockOf(tenantDb, docs.flatMap(skusOfProduct));
      const id = channel._id.toHexString();
      const rows = docs
        .map((d) => ({ d, stock: skusOfProduct(d).reduce((n, s) => n + (stock.get(s)?.total ?? 0), 0) }))
        .filter((r) => publishProblems(r.d, 't1').every((p) => !p.startsWith('no image') && p !== 'zero price'))
        .filter((r) => (q.inStock === 'true' ? r.stock > 0 : q.inStock === 'false' ? r.stock === 0 : true));
      ctx.body = {
        products: rows.slice(page * limit, (page + 1) * limit).map((r) => ({
          ...presentListItem(r.d, new Set()),
          stock: r.stock,
          hasBinding: (r.d.bindings as unknown as { channelId: string }[]).some((b) => b.channelId === id),
        })),
        page,
        limit,
        total: rows.length,
      };
    },
  },
]);
