import { Channels, type ChannelDoc } from '../channels/channels';
import { resolveChannelType } from '../channels/channel-types';
import { AppError } from '../errors/catalog';
import type { PublicationContext } from './context';

/** The channel a publication or a validation names: 404 CHANNEL_NOT_FOUND (the spec's publication code) when the tenant has none. */
export async function publicationChannel(c: PublicationContext, channelId: string): Promise<ChannelDoc> {
  const channel = await new Channels(c.tenantDb, c.secretsKey).get(channelId);
  if (!channel)
    throw new AppError(404, 'CHANNEL_NOT_FOUND', `No channel ${channelId} in this tenant`, { field: 'channelId' });
  return channel;
}

/** A retail-group (t1) channel, with the spec's codes of those reads: 404 channel-not-found, 400 invalid-channel-type. */
export async function retailGroupChannel(c: PublicationContext, channelId: string): Promise<ChannelDoc> {
  const channel = await new Channels(c.tenantDb, c.secretsKey).get(channelId);
  if (!channel) throw new AppError(404, 'channel-not-found', `No channel ${channelId} in this tenant`);
  if (resolveChannelType(channel.type)?.id !== 't1')
    throw new AppError(
      400,
      'invalid-channel-type',
      `Channel ${channelId} is a ${channel.type} channel; these reads are for the retail-group (t1) channel type`,
    );
  return channel;
}
