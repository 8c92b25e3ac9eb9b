import { Client, Connection } from '@temporalio/client';

/** One Temporal client per process. */
export async function connectTemporal(address: string, namespace: string): Promise<Client> {
  const connection = await Connection.connect({ address });
  return new Client({ connection, namespace });
}
