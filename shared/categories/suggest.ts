import { Channels, type ChannelDoc } from '../channels/channels';
import { SharedRateGate } from '../channels/rate-gate';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { assignmentOf, categorySite } from './assignment';
import { productsBySku } from './lookup';
import { predictCategories, PredictorError, type PredictorFailure } from './predictor';

/** How long a request waits out a throttled predictor before answering 503 with its Retry-After. */
const MAX_THROTTLE_WAIT_MS = 5_000;
const DEFAULT_TIMEOUT_MS = 15_000;

const FAILURES: Record<PredictorFailure, { status: number; code: string }> = {
  throttled: { status: 503, code: 'PREDICTOR_THROTTLED' },
  unavailable: { status: 502, code: 'PREDICTOR_UNAVAILABLE' },
  refused: { status: 502, code: 'PREDICTOR_REFUSED' },
  unsupported: { status: 502, code: 'PREDICTOR_UNSUPPORTED' },
  'bad-response': { status: 502, code: 'PREDICTOR_BAD_RESPONSE' },
};

/** A predictor's failure as the API answers it: 503 with Retry-After when throttled, else 502 naming why. */
export function predictorRefusal(err: PredictorError): AppError {
  const { status, code } = FAILURES[err.kind];
  const headers: Record<string, string> =
    err.retryAfterMs !== undefined ? { 'retry-after': String(Math.max(1, Math.ceil(err.retryAfterMs / 1000))) } : {};
  return new AppError(status, code, err.message, {}, headers);
}

/** What the channel's connector needs to reach its predictor. */
export function predictorTarget(channels: Channels, channel: ChannelDoc) {
  return {
    endpointUrl: channel.settings.endpointUrl,
    secret: channels.signingSecret(channel),
    timeoutMs: channel.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  };
}

/**
 * The categories service: the channel's predictor asked for a title (or a product's title),
 * through the channel's rate limit, timeout and signing. With a SKU the answer also says what the
 * product has now under the channel's key.
 */
export async function suggestCategories(
  tenantDb: TenantDb,
  secretsKey: string,
  q: { channelId: string; title?: string; sku?: string; limit: number },
) {
  const channels = new Channels(tenantDb, secretsKey);
  const channel = await channels.get(q.channelId);
  if (!channel) throw new AppError(404, 'CHANNEL_NOT_FOUND', `No channel ${q.channelId} in this tenant`);
  const sku = q.sku?.trim().toUpperCase();
  const product = sku ? (await productsBySku(tenantDb, [sku])).get(sku) : undefined;
  if (sku && !product) throw new AppError(404, 'PRODUCT_NOT_FOUND', `No product with SKU ${sku}`);
  const title = q.title?.trim() || product?.title?.value?.trim();
  if (!title)
    throw new AppError(400, 'MISSING_PARAMETER', `Product ${sku} has no title; send title`, { parameter: 'title' });
  const site = categorySite(channel);
  try {
    const suggestions = await predictCategories({
      target: predictorTarget(channels, channel),
      channelType: site.channelType,
      siteId: site.siteId,
      title,
      limit: q.limit,
      slot: () => new SharedRateGate(tenantDb, channel._id.toHexString(), channel.settings.rateLimitPerSecond).slot(),
      maxThrottleWaitMs: MAX_THROTTLE_WAIT_MS,
    });
    return {
      channelId: channel._id.toHexString(),
      channelType: site.channelType,
      siteId: site.siteId,
      metafieldKey: site.key,
      title,
      ...(product ? { sku: product.sku, current: assignmentOf(product, site.key) } : {}),
      suggestions,
    };
  } catch (err) {
    if (err instanceof PredictorError) throw predictorRefusal(err);
    throw err;
  }
}
