import { ApiClient, type HttpResult } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * Concurrent partial updates of one record each land: a version-guarded write that another write
 * got in before reads again and applies again, for as long as it takes (with jittered waits), so
 * ten overlapping PATCHes of a customer or a webhook endpoint are all 200 and all applied. (A 409
 * conflict would make a client following the spec's retry rules drop its change.)
 */
let deps: TestDeps;
let api: ApiClient;
let receiver: WebhookReceiver;
const P = `CPT${Date.now().toString(36)}`;

beforeAll(async () => {
  deps = await TestDeps.open();
  const t = await deps.tenantWithKey(undefined, 'concurrent patches');
  api = new ApiClient(t.key);
  receiver = await new WebhookReceiver().start();
});
afterAll(async () => {
  await receiver.close();
  await deps.close();
});

const refused = (answers: HttpResult[]) =>
  answers.filter((a) => a.status !== 200).map((a) => `${a.status} ${a.body?.code}`);

test('ten concurrent PATCHes of one customer are each applied; none is refused 409', async () => {
  const problems: string[] = [];
  for (let round = 0; round < 5; round++) {
    const c = await api.post('/customers', { name: `${P} ${round}` });
    expect(c.status).toBe(201);
    const id = c.body.id as string;
    const email = `${P.toLowerCase()}-${round}@example.com`;
    const patches: Record<string, unknown>[] = [
      { phone: '+1 555 0100' },
      { taxId: `TAX-${round}` },
      { notes: 'prefers mornings' },
      { tags: ['vip'] },
      { addresses: [{ street: 'Main 1', city: 'Town', zipCode: '12345', country: 'US' }] },
      { email },
      { name: `${P} renamed A` },
      { name: `${P} renamed B` },
      { name: `${P} renamed C` },
      { name: `${P} renamed D` },
    ];
    const answers = await Promise.all(patches.map((p) => api.patch(`/customers/${id}`, p)));
    problems.push(...refused(answers).map((r) => `round ${round}: ${r}`));
    const now = (await api.get(`/customers/${id}`)).body;
    const kept = {
      phone: now.phone,
      taxId: now.taxId,
      notes: now.notes,
      tags: now.tags,
      street: now.addresses[0]?.street ?? null,
      email: now.email,
    };
    const expected = {
      phone: '+1 555 0100',
      taxId: `TAX-${round}`,
      notes: 'prefers mornings',
      tags: ['vip'],
      street: 'Main 1',
      email,
    };
    if (JSON.stringify(kept) !== JSON.stringify(expected))
      problems.push(`round ${round}: holds ${JSON.stringify(kept)}`);
  }
  expect(problems).toEqual([]);
});

test('ten concurrent PATCHes of one webhook endpoint are each applied; none is refused 409', async () => {
  const problems: string[] = [];
  for (let round = 0; round < 5; round++) {
    const ep = await api.post('/webhooks', { url: receiver.url, eventTypes: ['customer.created'] });
    expect(ep.status).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => api.patch(`/webhooks/${ep.body.id}`, { description: `change ${i}` })),
    );
    problems.push(...refused(answers).map((r) => `round ${round}: ${r}`));
  }
  expect(problems).toEqual([]);
});

test('ten concurrent PUTs of one order, each another note, are each applied: ten updated events', async () => {
  const sku = `${P}-MUG`.toUpperCase();
  expect((await api.post('/products', { sku, title: { value: 'Mug' }, price: 10 })).status).toBe(201);
  const made = await api.post('/orders', {
    externalId: `${P}-order`,
    customerInfo: { name: 'Ana' },
    items: [{ sku, quantity: 1 }],
  });
  expect(made.status).toBe(201);
  const id = made.body.data._id;
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, i) => api.put(`/orders/${id}`, { notes: `note ${i}` })),
  );
  expect(refused(answers)).toEqual([]);
  const log = (await api.get(`/orders/${id}/activity-log?limit=200`)).body.data as { type: string }[];
  expect(log.filter((e) => e.type === 'updated')).toHaveLength(10);
});
