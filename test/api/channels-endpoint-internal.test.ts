import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';

/**
 * A channel's `settings.endpointUrl` is called by the service itself (publication PUTs, category
 * suggestions, and the retail-group catalog read, which answers the channel's body or error text
 * back to the caller), so the webhook targets' policy applies to it: one on a link-local address
 * (169.254/16, cloud metadata) is 400 on create and update, nothing stored. Before, it was
 * accepted and called.
 */
let deps: TestDeps;
let api: ApiClient;
beforeAll(async () => {
  deps = await TestDeps.open();
  api = new ApiClient((await deps.tenantWithKey()).key);
});
afterAll(() => deps.close());

const METADATA = 'http://169.254.169.254/latest/meta-data?x=';

test('a channel endpointUrl on the cloud-metadata (link-local) address is refused, and nothing is stored', async () => {
  const res = await api.post('/channels', { name: 'Meta', type: 't1', settings: { endpointUrl: METADATA } });
  if (res.status === 201) {
    // what it leads to: the service calls the address and answers the response text to the tenant
    const read = await api.get(`/products/channel/${res.body.id}/catalog`);
    console.log('catalog read of a channel at 169.254.169.254:', read.status, JSON.stringify(read.body));
  }
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ code: 'validation-error', field: 'settings.endpointUrl' });
  expect((await api.get('/channels')).body.totalCount).toBe(0);
});

test('an update moving a channel onto the link-local address is refused and changes nothing', async () => {
  const created = await api.post('/channels', {
    name: 'Shop',
    type: 'shopify',
    settings: { endpointUrl: 'https://shop.example.com/api' },
  });
  expect(created.status).toBe(201);
  const res = await api.put(`/channels/${created.body.id}`, { settings: { endpointUrl: METADATA } });
  expect(res.status).toBe(400);
  expect((await api.get(`/channels/${created.body.id}`)).body.settings.endpointUrl).toBe(
    'https://shop.example.com/api',
  );
});
