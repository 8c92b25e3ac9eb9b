import { Channels } from '../channels/channels';
import { resolveChannelType } from '../channels/channel-types';
import { AppError } from '../errors/catalog';
import type { PageRequest } from '../paging';
import { syncStatusOf } from '../products/sync-status';
import { publicationChannel } from './channel-lookup';
import type { PublicationContext } from './context';
import { BLOCKING_PROBLEMS, INACTIVE_BINDING, publishProblems } from './publication';
import { productsByIds, resolveSelection, selectionPage, type Selection } from './selection';

interface Binding {
  channelId: string;
  handle: string;
  status?: string;
  syncStatus?: string;
  syncedVersion?: number | null;
  lastError?: string | null;
  lastSyncedAt?: string | null;
}

interface Readiness {
  id: string;
  sku: string;
  title: string | null;
  reasons: string[];
}

/**
 * Which products of a selection can be published on a channel, one page at a time: published (in
 * sync and nothing wrong), rejected (a blocking problem: no image, zero price), needs_review
 * (fixable: category, attributes) or ready.
 */
export async function validateSelection(
  c: PublicationContext,
  channelId: string,
  selection: Selection,
  paging: PageRequest,
) {
  const channel = await publicationChannel(c, channelId);
  const { docs, total } = await selectionPage(c.tenantDb, selection, paging);
  const out = {
    published: [] as Readiness[],
    ready: [] as Readiness[],
    needs_review: [] as Readiness[],
    rejected: [] as Readiness[],
    page: paging.page,
    limit: paging.limit,
    total,
  };
  const id = channel._id.toHexString();
  for (const p of docs) {
    const entry = { id: p._id.toHexString(), sku: p.sku, title: p.title?.value ?? null };
    const binding = (p.bindings as unknown as Binding[]).find((x) => x.channelId === id);
    const problems = publishProblems(p, channel);
    // a publication skips it (CHANNEL_INACTIVE) unless it forces the update
    if (binding?.status && INACTIVE_BINDING.includes(binding.status))
      problems.push(`its binding to this channel is ${binding.status} (publish with options.forceUpdate to send it)`);
    if (binding && syncStatusOf(binding, p.version) === 'synced' && !problems.length)
      out.published.push({ ...entry, reasons: [] });
    else if (problems.some((x) => BLOCKING_PROBLEMS.includes(x))) out.rejected.push({ ...entry, reasons: problems });
    else if (problems.length) out.needs_review.push({ ...entry, reasons: problems });
    else out.ready.push({ ...entry, reasons: [] });
  }
  return out;
}

/** A product's feeds not in sync on the channels of one type (`destination`, any spelling of it; default walmart). */
export async function pendingFeeds(c: PublicationContext, rawSku: string, destination: string) {
  const type = resolveChannelType(destination);
  if (!type) throw new AppError(400, 'bad-request', `Unknown destination ${destination}`, { field: 'destination' });
  const sku = rawSku.trim().toUpperCase();
  const notFound = () => new AppError(404, 'not-found', `No product with SKU ${sku}`);
  const [productId] = await resolveSelection(c.tenantDb, { mode: 'selected', productIds: [sku] }).catch(() => {
    throw notFound();
  });
  const [doc] = await productsByIds(c.tenantDb, [productId]);
  if (!doc) throw notFound(); // deleted since
  const channels = new Channels(c.tenantDb, c.secretsKey);
  const feeds = [];
  for (const b of doc.bindings as unknown as Binding[]) {
    const syncStatus = syncStatusOf(b, doc.version);
    if (syncStatus === 'synced') continue;
    const channel = await channels.get(b.channelId);
    if (!channel || resolveChannelType(channel.type)?.id !== type.id) continue;
    feeds.push({
      channelId: b.channelId,
      channelName: channel.name,
      handle: b.handle,
      status: b.status ?? 'pending',
      syncStatus: syncStatus ?? 'pending',
      lastError: b.lastError ?? null,
      lastSyncedAt: b.lastSyncedAt ?? null,
    });
  }
  return { feeds, sku, destination };
}
