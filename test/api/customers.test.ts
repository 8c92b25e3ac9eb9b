import { ApiClient, type HttpResult } from '../helpers/client';
import { expectError } from '../helpers/expect-error';
import { TestDeps } from '../helpers/stack';
import type { Scope } from '../../shared/auth/scopes';

/**
 * Customers through HTTP on the real API process: CRUD, one customer per e-mail (any case, under
 * concurrent creates), search and paging, orders that reference a customer, redaction, data
 * export, tenant isolation and scopes. /customers is area 'other': flat `{code, message}` errors.
 */
let deps: TestDeps;
type Tenant = { tenantId: string; key: string; keyId: string; api: ApiClient };
let A: Tenant;
let B: Tenant;
let n = 0;
const P = `K${Date.now().toString(36).toUpperCase()}`;
const SKU = `${P}-MUG`;

const SCOPES: Scope[] = [
  'customers:read',
  'customers:update',
  'orders:read',
  'orders:create',
  'orders:update',
  'products:create',
];

async function tenant(name: string, scopes: Scope[] = SCOPES): Promise<Tenant> {
  const t = await deps.tenantWithKey(scopes, name);
  return { ...t, api: new ApiClient(t.key) };
}

/** Another key of the tenant holding only `scopes`. */
async function keyWith(t: Tenant, scopes: Scope[]): Promise<ApiClient> {
  const issued = await deps.tenancy.issueKey(t.tenantId, scopes);
  return new ApiClient(issued.key);
}

beforeAll(async () => {
  deps = await TestDeps.open();
  A = await tenant('customers A');
  B = await tenant('customers B');
  for (const t of [A, B]) {
    const res = await t.api.post('/products', { sku: SKU, title: { value: 'Mug' }, price: 10, sellIfOutOfStock: true });
    expect(res.status).toBe(201);
  }
});
afterAll(() => deps.close());

const err = (res: HttpResult, status: number, code: string) => expectError(res, status, code, 'other');
const ordersErr = (res: HttpResult, status: number, code: string) => expectError(res, status, code, 'orders');

const email = (tag = '') => `${P.toLowerCase()}.${++n}${tag}@example.com`;

async function createCustomer(o: Record<string, unknown> = {}, t: Tenant = A) {
  const res = await t.api.post('/customers', { name: `${P} Customer ${++n}`, ...o });
  expect(res.status).toBe(201);
  return res.body;
}

const ADDRESS = {
  label: 'home',
  street: 'Av. Reforma 1',
  city: 'CDMX',
  state: 'CDMX',
  zipCode: '06600',
  country: 'MX',
};

async function createOrder(o: Record<string, unknown> = {}, t: Tenant = A) {
  const res = await t.api.post('/orders', {
    externalId: `${P}-ext-${++n}`,
    customerInfo: { name: 'Ana López', email: 'ana@example.com', phone: '+52 55 1234' },
    shippingAddress: { street: 'Av. Reforma 1', city: 'CDMX', state: 'CDMX', zipCode: '06600', country: 'MX' },
    items: [{ sku: SKU, quantity: 2 }],
    ...o,
  });
  expect(res.status).toBe(201);
  return res.body.data;
}

/** The tenant's stored customers and e-mail claims, for "nothing was written" checks. */
async function stored(t: Tenant) {
  const [customers, claims, orders] = await Promise.all([
    deps.db.collection('customers').find({ tenantId: t.tenantId }).sort({ _id: 1 }).toArray(),
    deps.db.collection('customer_emails').find({ tenantId: t.tenantId }).sort({ _id: 1 }).toArray(),
    deps.db.collection('orders').find({ tenantId: t.tenantId }).sort({ _id: 1 }).toArray(),
  ]);
  return { customers, claims, orders };
}

const CUSTOMER_KEYS = [
  'addresses',
  'createdAt',
  'email',
  'id',
  'name',
  'notes',
  'phone',
  'redactedAt',
  'tags',
  'taxId',
  'updatedAt',
];

describe('create and read', () => {
  test('201 with every member; the stored e-mail is as sent; a second request reads the same', async () => {
    const mail = `  ${P}.Full@Example.COM`.trim();
    const res = await A.api.post('/customers', {
      name: `  ${P} Ana López  `,
      email: mail,
      phone: '+52 55 1234 5678',
      addresses: [ADDRESS, { street: 'Calle 2', city: 'Monterrey', zipCode: '64000', country: 'MX' }],
      taxId: 'LOAA800101XXX',
      tags: ['vip', ' wholesale ', 'vip'],
      notes: 'prefers e-mail',
    });
    expect(res.status).toBe(201);
    const c = res.body;
    expect(Object.keys(c).sort()).toEqual(CUSTOMER_KEYS);
    expect(c).toMatchObject({
      name: `${P} Ana López`,
      email: mail,
      phone: '+52 55 1234 5678',
      addresses: [ADDRESS, { street: 'Calle 2', city: 'Monterrey', zipCode: '64000', country: 'MX' }],
      taxId: 'LOAA800101XXX',
      tags: ['vip', 'wholesale'],
      notes: 'prefers e-mail',
      redactedAt: null,
    });
    expect(c.id).toMatch(/^[0-9a-f]{24}$/);
    expect(res.headers.get('location')).toBe(`/customers/${c.id}`);
    expect(c.updatedAt).toBe(c.createdAt);
    expect((await A.api.get(`/customers/${c.id}`)).body).toEqual(c);
  });

  test('only a name: the optional members answer null or empty', async () => {
    const c = await createCustomer({ name: 'Solo Name' });
    expect(c).toMatchObject({
      name: 'Solo Name',
      email: null,
      phone: null,
      addresses: [],
      taxId: null,
      tags: [],
      notes: null,
      redactedAt: null,
    });
  });

  test.each([
    ['no name', { email: 'x@example.com' }, 'name'],
    ['blank name', { name: '   ' }, 'name'],
    ['name too long', { name: 'x'.repeat(201) }, 'name'],
    ['name not text', { name: 42 }, 'name'],
    ['e-mail malformed', { name: 'A', email: 'not-an-email' }, 'email'],
    ['unknown field', { name: 'A', colour: 'red' }, 'colour'],
    [
      'address without city',
      { name: 'A', addresses: [{ street: 's', zipCode: '1', country: 'MX' }] },
      'addresses.0.city',
    ],
    ['unknown country', { name: 'A', addresses: [{ ...ADDRESS, country: 'XX' }] }, 'addresses.0.country'],
    ['tag blank', { name: 'A', tags: ['ok', ' '] }, 'tags.1'],
    ['null e-mail on create', { name: 'A', email: null }, 'email'],
  ])('%s → 400 validation-error naming the field; nothing stored', async (_label, body, field) => {
    const before = await stored(A);
    const res = await A.api.post('/customers', body);
    err(res, 400, 'validation-error');
    expect(res.body.field).toBe(field);
    expect(res.body.fieldErrors.map((f: { field: string }) => f.field)).toContain(field);
    expect(await stored(A)).toEqual(before);
  });

  test('a malformed JSON body, or none: 400, nothing stored', async () => {
    const before = await stored(A);
    err(
      await A.api.request('POST', '/customers', { raw: '{"name":', headers: { 'content-type': 'application/json' } }),
      400,
      'validation-error',
    );
    err(await A.api.post('/customers'), 400, 'validation-error');
    expect(await stored(A)).toEqual(before);
  });

  test('an e-mail another customer has, in another case: 409 duplicate-email naming it; nothing stored', async () => {
    const mail = email();
    const first = await createCustomer({ email: mail });
    const before = await stored(A);
    const res = await A.api.post('/customers', { name: 'Copy', email: mail.toUpperCase() });
    err(res, 409, 'duplicate-email');
    expect(res.body.field).toBe('email');
    expect(res.body.message).toContain(first.id);
    expect(await stored(A)).toEqual(before);
  });

  test('20 concurrent creates of one e-mail in different cases: exactly one 201, 19 409 duplicate-email', async () => {
    const mail = email('race');
    const spellings = Array.from({ length: 20 }, (_, i) =>
      [...mail].map((ch, j) => ((i >> (j % 5)) & 1 ? ch.toUpperCase() : ch)).join(''),
    );
    const answers = await Promise.all(
      spellings.map((e, i) => A.api.post('/customers', { name: `Racer ${i}`, email: e })),
    );
    const created = answers.filter((r) => r.status === 201);
    const refused = answers.filter((r) => r.status === 409);
    expect(created).toHaveLength(1);
    expect(refused).toHaveLength(19);
    for (const r of refused) err(r, 409, 'duplicate-email');
    const winner = created[0].body;
    const found = await A.api.get('/customers', { query: { q: mail, limit: 100 } });
    expect(found.body.customers).toEqual([winner]);
    expect(found.body.totalCount).toBe(1);
    // one claim, held by the winner
    const claims = (await stored(A)).claims.filter((c) => c.emailKey === mail.toLowerCase());
    expect(claims.map((c) => c.customerId)).toEqual([winner.id]);
  });

  test('unknown, malformed and other-tenant ids: 404 not-found', async () => {
    const c = await createCustomer({}, B);
    err(await A.api.get('/customers/0123456789abcdef01234567'), 404, 'not-found');
    err(await A.api.get('/customers/nope'), 404, 'not-found');
    err(await A.api.get(`/customers/${c.id}`), 404, 'not-found');
  });
});

describe('list: search and paging', () => {
  let C: Tenant;
  let made: any[];

  beforeAll(async () => {
    C = await tenant('customers list');
    made = [];
    made.push(await createCustomer({ name: 'Ana López', email: 'Ana.Lopez@Example.com', tags: ['vip'] }, C));
    made.push(await createCustomer({ name: 'Bruno Díaz', phone: '+52 81 5555 0101', tags: ['wholesale'] }, C));
    made.push(await createCustomer({ name: 'Carla Ruiz', taxId: 'RUCA900202ABC', tags: ['vip', 'wholesale'] }, C));
    made.push(await createCustomer({ name: 'Diego (test) [x]', email: 'diego@shop.mx' }, C));
    made.push(await createCustomer({ name: 'Elena Soto' }, C));
  });

  const ids = (res: HttpResult) => res.body.customers.map((c: { id: string }) => c.id);

  test('newest first, {customers, totalCount, page, limit}', async () => {
    const res = await C.api.get('/customers');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ customers: [...made].reverse(), totalCount: 5, page: 1, limit: 20 });
  });

  test('paging: limit and page select a window; past the end is empty', async () => {
    const all = [...made].reverse().map((c) => c.id);
    const p1 = await C.api.get('/customers', { query: { limit: 2, page: 1 } });
    const p2 = await C.api.get('/customers', { query: { limit: 2, page: 2 } });
    const p3 = await C.api.get('/customers', { query: { limit: 2, page: 3 } });
    expect([ids(p1), ids(p2), ids(p3)]).toEqual([all.slice(0, 2), all.slice(2, 4), all.slice(4)]);
    expect(p2.body).toMatchObject({ totalCount: 5, page: 2, limit: 2 });
    const past = await C.api.get('/customers', { query: { limit: 2, page: 9 } });
    expect(past.body).toEqual({ customers: [], totalCount: 5, page: 9, limit: 2 });
  });

  test.each([
    ['name, any case', 'aNA lóp', [0]],
    ['e-mail, any case', 'ANA.LOPEZ@', [0]],
    ['phone', '5555 0101', [1]],
    ['taxId, any case', 'ruca900202', [2]],
    ['regex characters are plain text', '(test) [x]', [3]],
    ['a domain', 'shop.mx', [3]],
    ['nothing', 'zzz-nobody', []],
  ])('q finds %s', async (_label, q, which) => {
    const res = await C.api.get('/customers', { query: { q } });
    expect(ids(res)).toEqual((which as number[]).map((i) => made[i].id).reverse());
    expect(res.body.totalCount).toBe((which as number[]).length);
  });

  test('tag, alone and with q', async () => {
    expect(ids(await C.api.get('/customers', { query: { tag: 'vip' } }))).toEqual([made[2].id, made[0].id]);
    expect(ids(await C.api.get('/customers', { query: { tag: 'wholesale', q: 'carla' } }))).toEqual([made[2].id]);
  });

  test.each([
    ['limit 0', { limit: 0 }, 'limit'],
    ['limit over 100', { limit: 101 }, 'limit'],
    ['page 0', { page: 0 }, 'page'],
    ['unknown parameter', { sort: 'name' }, 'sort'],
  ])('%s → 400 validation-error naming it', async (_label, query, field) => {
    const res = await C.api.get('/customers', { query: query as Record<string, string | number> });
    err(res, 400, 'validation-error');
    expect(res.body.field).toBe(field);
  });

  test('an unknown parameter is answered with the names each list takes', async () => {
    const list = await C.api.get('/customers', { query: { status: 'active' } });
    err(list, 400, 'validation-error');
    expect(list.body.message).toContain('accepted: q, tag, page, limit');
    const someone = (await C.api.post('/customers', { name: 'Query Names' })).body.id;
    const orders = await C.api.get(`/customers/${someone}/orders`, { query: { status: 'x' } });
    err(orders, 400, 'validation-error');
    expect(orders.body.message).toContain('accepted: page, limit');
  });

  test("another tenant's customers are not listed", async () => {
    const res = await B.api.get('/customers', { query: { q: 'Ana López', limit: 100 } });
    expect(ids(res)).not.toContain(made[0].id);
  });
});

describe('PATCH /customers/{id}', () => {
  test('only the fields sent change; null clears; the answer is what a read shows', async () => {
    const c = await createCustomer({
      email: email(),
      phone: '1',
      taxId: 'T1',
      notes: 'n',
      tags: ['a'],
      addresses: [ADDRESS],
    });
    const res = await A.api.patch(`/customers/${c.id}`, {
      phone: '+52 1',
      notes: null,
      tags: ['b', 'c'],
      addresses: null,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...c,
      phone: '+52 1',
      notes: null,
      tags: ['b', 'c'],
      addresses: [],
      updatedAt: res.body.updatedAt,
    });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(c.updatedAt));
    expect((await A.api.get(`/customers/${c.id}`)).body).toEqual(res.body);
  });

  test('a new e-mail frees the old one; clearing it frees it too; another case of its own is no conflict', async () => {
    const [old, next] = [email(), email()];
    const c = await createCustomer({ email: old });
    const moved = await A.api.patch(`/customers/${c.id}`, { email: next });
    expect(moved.body.email).toBe(next);
    // the old e-mail is free for someone else
    await createCustomer({ email: old.toUpperCase() });
    const recased = await A.api.patch(`/customers/${c.id}`, { email: next.toUpperCase() });
    expect(recased.status).toBe(200);
    expect(recased.body.email).toBe(next.toUpperCase());
    const cleared = await A.api.patch(`/customers/${c.id}`, { email: null });
    expect(cleared.body.email).toBeNull();
    await createCustomer({ email: next });
  });

  test("another customer's e-mail: 409 duplicate-email; neither customer changes, no claim moves", async () => {
    const taken = await createCustomer({ email: email() });
    const c = await createCustomer({ email: email(), phone: '1' });
    const before = await stored(A);
    const res = await A.api.patch(`/customers/${c.id}`, { email: taken.email.toUpperCase(), phone: '2' });
    err(res, 409, 'duplicate-email');
    expect(res.body.field).toBe('email');
    expect((await A.api.get(`/customers/${c.id}`)).body).toEqual(c);
    expect(await stored(A)).toEqual(before);
  });

  test.each([
    ['empty body', {}, '(body)'],
    ['unknown field', { colour: 'red' }, 'colour'],
    ['null name', { name: null }, 'name'],
    ['blank name', { name: ' ' }, 'name'],
    ['bad e-mail', { email: 'x' }, 'email'],
  ])('%s → 400 validation-error naming it; nothing changes', async (_label, body, field) => {
    const c = await createCustomer();
    const res = await A.api.patch(`/customers/${c.id}`, body);
    err(res, 400, 'validation-error');
    expect(res.body.field).toBe(field);
    expect((await A.api.get(`/customers/${c.id}`)).body).toEqual(c);
  });

  test('unknown or other-tenant customer: 404', async () => {
    const other = await createCustomer({}, B);
    err(await A.api.patch('/customers/0123456789abcdef01234567', { name: 'x' }), 404, 'not-found');
    err(await A.api.patch(`/customers/${other.id}`, { name: 'x' }), 404, 'not-found');
    expect((await B.api.get(`/customers/${other.id}`)).body).toEqual(other);
  });
});

describe('DELETE /customers/{id}', () => {
  test('a customer without orders is deleted, and its e-mail is free again', async () => {
    const mail = email();
    const c = await createCustomer({ email: mail });
    const res = await A.api.delete(`/customers/${c.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: expect.stringContaining(c.id) });
    err(await A.api.get(`/customers/${c.id}`), 404, 'not-found');
    err(await A.api.delete(`/customers/${c.id}`), 404, 'not-found');
    await createCustomer({ email: mail.toUpperCase() });
  });

  test('a customer orders reference: 409 customer-has-orders; it stays', async () => {
    const c = await createCustomer({ email: email() });
    await createOrder({ customerId: c.id });
    const before = await stored(A);
    const res = await A.api.delete(`/customers/${c.id}`);
    err(res, 409, 'customer-has-orders');
    expect(res.body.message).toContain('redact');
    expect((await A.api.get(`/customers/${c.id}`)).body).toEqual(c);
    expect(await stored(A)).toEqual(before);
  });

  test("another tenant's customer: 404, and it stays", async () => {
    const other = await createCustomer({}, B);
    err(await A.api.delete(`/customers/${other.id}`), 404, 'not-found');
    expect((await B.api.get(`/customers/${other.id}`)).status).toBe(200);
  });
});

describe('orders that reference a customer', () => {
  test('an order created with customerId carries it, and GET /customers/{id}/orders lists it as GET /orders shows it', async () => {
    const c = await createCustomer();
    const first = await createOrder({ customerId: c.id });
    const second = await createOrder({ customerId: c.id.toUpperCase() });
    await createOrder(); // no customer
    expect(first.customerId).toBe(c.id);
    expect(second.customerId).toBe(c.id);
    const list = await A.api.get(`/customers/${c.id}/orders`);
    expect(list.status).toBe(200);
    const read = await Promise.all([second, first].map(async (o) => (await A.api.get(`/orders/${o._id}`)).body.data));
    expect(list.body).toEqual({ orders: read, totalCount: 2, page: 1, limit: 20 });
    const paged = await A.api.get(`/customers/${c.id}/orders`, { query: { limit: 1, page: 2 } });
    expect(paged.body).toEqual({ orders: [read[1]], totalCount: 2, page: 2, limit: 1 });
  });

  test('a customer without orders lists none; an unknown or other-tenant customer is 404', async () => {
    const c = await createCustomer();
    expect((await A.api.get(`/customers/${c.id}/orders`)).body).toEqual({
      orders: [],
      totalCount: 0,
      page: 1,
      limit: 20,
    });
    const other = await createCustomer({}, B);
    err(await A.api.get(`/customers/${other.id}/orders`), 404, 'not-found');
    err(await A.api.get('/customers/nope/orders'), 404, 'not-found');
  });

  test.each([
    ['an unknown customer', () => '0123456789abcdef01234567'],
    ['a malformed id', () => 'not-a-customer'],
  ])('an order naming %s: 400 validation:invalid_input naming customerId; nothing stored', async (_label, id) => {
    const before = await stored(A);
    const res = await A.api.post('/orders', {
      externalId: `${P}-bad-${++n}`,
      customerInfo: { name: 'X' },
      customerId: id(),
      items: [{ sku: SKU, quantity: 1 }],
    });
    ordersErr(res, 400, 'validation:invalid_input');
    expect(res.body.error.message).toContain('customerId');
    expect(await stored(A)).toEqual(before);
  });

  test("an order naming another tenant's customer: 400, nothing stored", async () => {
    const other = await createCustomer({}, B);
    const before = await stored(A);
    const res = await A.api.post('/orders', {
      externalId: `${P}-cross-${++n}`,
      customerInfo: { name: 'X' },
      customerId: other.id,
      items: [{ sku: SKU, quantity: 1 }],
    });
    ordersErr(res, 400, 'validation:invalid_input');
    expect(res.body.error.message).toContain('customerId');
    expect(await stored(A)).toEqual(before);
  });

  test('PUT /orders/{id} links, relinks and (with null) unlinks; an unknown customer is 400 and the order stays', async () => {
    const [c1, c2] = [await createCustomer(), await createCustomer()];
    const order = await createOrder();
    const linked = await A.api.put(`/orders/${order._id}`, { customerId: c1.id });
    expect(linked.status).toBe(200);
    expect(linked.body.data.customerId).toBe(c1.id);
    expect((await A.api.get(`/customers/${c1.id}/orders`)).body.totalCount).toBe(1);
    await A.api.put(`/orders/${order._id}`, { customerId: c2.id });
    expect((await A.api.get(`/customers/${c1.id}/orders`)).body.totalCount).toBe(0);
    expect((await A.api.get(`/customers/${c2.id}/orders`)).body.orders.map((o: any) => o._id)).toEqual([order._id]);

    const current = (await A.api.get(`/orders/${order._id}`)).body.data;
    const bad = await A.api.put(`/orders/${order._id}`, { customerId: '0123456789abcdef01234567', notes: 'x' });
    ordersErr(bad, 400, 'validation:invalid_input');
    expect(bad.body.error.message).toContain('customerId');
    expect((await A.api.get(`/orders/${order._id}`)).body.data).toEqual(current);

    const unlinked = await A.api.put(`/orders/${order._id}`, { customerId: null });
    expect(unlinked.status).toBe(200);
    expect(unlinked.body.data.customerId).toBeNull();
    const read = (await A.api.get(`/orders/${order._id}`)).body.data;
    expect(read).not.toHaveProperty('customerId');
    expect((await A.api.get(`/customers/${c2.id}/orders`)).body.totalCount).toBe(0);
  });
});

describe('POST /customers/{id}/redact', () => {
  test("erases the customer's personal data and its orders' customer fields; totals, items and history stay", async () => {
    const mail = email();
    const c = await createCustomer({
      email: mail,
      phone: '+52 55 0000',
      taxId: 'TAX1',
      notes: 'likes blue',
      tags: ['vip'],
      addresses: [ADDRESS],
    });
    const o1 = await createOrder({ customerId: c.id, notes: 'gift' });
    const o2 = await createOrder({ customerId: c.id, customerInfo: { name: 'Ana', taxId: 'TAX1', company: 'ACME' } });
    expect((await A.api.post(`/orders/${o1._id}/accept`)).status).toBe(200);
    const unrelated = await createOrder();
    const before1 = (await A.api.get(`/orders/${o1._id}`)).body.data;
    const log1 = (await A.api.get(`/orders/${o1._id}/activity-log`)).body.data;

    const res = await A.api.post(`/customers/${c.id}/redact`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...c,
      name: 'Redacted customer',
      email: null,
      phone: null,
      taxId: null,
      notes: null,
      addresses: [],
      tags: ['vip'],
      redactedAt: expect.any(String),
      updatedAt: res.body.redactedAt,
    });
    expect((await A.api.get(`/customers/${c.id}`)).body).toEqual(res.body);

    const after1 = (await A.api.get(`/orders/${o1._id}`)).body.data;
    expect(after1).toEqual({
      ...before1,
      customerInfo: { name: 'Redacted customer', email: '[redacted]', phone: '[redacted]' },
      shippingAddress: {
        street: '[redacted]',
        city: '[redacted]',
        state: '[redacted]',
        zipCode: '[redacted]',
        country: 'MX',
      },
      updatedAt: after1.updatedAt,
    });
    expect(after1).toMatchObject({ subtotal: 20, total: before1.total, items: before1.items, orderStatus: 'accepted' });
    const after2 = (await A.api.get(`/orders/${o2._id}`)).body.data;
    expect(after2.customerInfo).toEqual({ name: 'Redacted customer', taxId: '[redacted]', company: '[redacted]' });
    expect(after2.total).toBe(o2.total);
    // the history stays, with the redaction as one more event
    const log = (await A.api.get(`/orders/${o1._id}/activity-log`)).body.data;
    expect(log.slice(0, log1.length)).toEqual(log1);
    expect(log.slice(log1.length).map((e: any) => [e.type, e.details])).toEqual([
      ['customer_updated', { redacted: true, customerId: c.id }],
    ]);
    expect(JSON.stringify(log)).not.toContain('Ana López');
    // an order of nobody else changes
    expect((await A.api.get(`/orders/${unrelated._id}`)).body.data).toEqual(unrelated);
    expect(JSON.stringify((await A.api.get(`/customers/${c.id}/orders`)).body)).not.toMatch(/Ana|Reforma|55 1234/);

    // the e-mail is free for another customer
    await createCustomer({ email: mail });
  });

  test('idempotent: a repeat answers the same and changes nothing', async () => {
    const c = await createCustomer({ email: email(), phone: '1' });
    const o = await createOrder({ customerId: c.id });
    const first = await A.api.post(`/customers/${c.id}/redact`);
    const order = (await A.api.get(`/orders/${o._id}`)).body.data;
    const snapshot = await stored(A);
    const again = await A.api.post(`/customers/${c.id}/redact`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await A.api.get(`/orders/${o._id}`)).body.data).toEqual(order);
    expect(await stored(A)).toEqual(snapshot);
  });

  test('a redacted customer cannot change (409 customer-redacted), takes no new orders (400), and is still not deletable while orders reference it', async () => {
    const c = await createCustomer({ email: email() });
    await createOrder({ customerId: c.id });
    const redacted = (await A.api.post(`/customers/${c.id}/redact`)).body;
    const before = await stored(A);
    err(await A.api.patch(`/customers/${c.id}`, { name: 'Back again', email: email() }), 409, 'customer-redacted');
    const order = await A.api.post('/orders', {
      externalId: `${P}-after-${++n}`,
      customerInfo: { name: 'Ana' },
      customerId: c.id,
      items: [{ sku: SKU, quantity: 1 }],
    });
    ordersErr(order, 400, 'validation:invalid_input');
    expect(order.body.error.message).toContain('customerId');
    err(await A.api.delete(`/customers/${c.id}`), 409, 'customer-has-orders');
    expect(await stored(A)).toEqual(before);
    expect((await A.api.get(`/customers/${c.id}`)).body).toEqual(redacted);
  });

  test("a redacted customer's orders keep their customer fields redacted: updates of them are 409, the rest still changes", async () => {
    const c = await createCustomer({ email: email() });
    const order = await createOrder({ customerId: c.id });
    const id = order.id ?? order._id;
    expect((await A.api.post(`/customers/${c.id}/redact`)).status).toBe(200);
    const redacted = (await A.api.get(`/orders/${id}`)).body.data;
    ordersErr(await A.api.put(`/orders/${id}`, { customerInfo: { name: 'Ana again' } }), 409, 'customer-redacted');
    ordersErr(await A.api.put(`/orders/${id}`, { shippingAddress: { street: 'Back 1' } }), 409, 'customer-redacted');
    ordersErr(await A.api.put(`/orders/${id}/customer`, { name: 'Ana again' }), 409, 'customer-redacted');
    const after = (await A.api.get(`/orders/${id}`)).body.data;
    expect({ customerInfo: after.customerInfo, shippingAddress: after.shippingAddress }).toEqual({
      customerInfo: redacted.customerInfo,
      shippingAddress: redacted.shippingAddress,
    });
    // what is not the customer's still changes
    expect((await A.api.put(`/orders/${id}`, { notes: 'ring twice' })).status).toBe(200);
  });

  test('a redacted customer without orders can be deleted', async () => {
    const c = await createCustomer({ email: email() });
    expect((await A.api.post(`/customers/${c.id}/redact`)).status).toBe(200);
    expect((await A.api.delete(`/customers/${c.id}`)).status).toBe(200);
  });

  test("unknown, malformed and other-tenant ids: 404, and the other tenant's customer keeps its data", async () => {
    const other = await createCustomer({ email: email() }, B);
    err(await A.api.post('/customers/0123456789abcdef01234567/redact'), 404, 'not-found');
    err(await A.api.post('/customers/nope/redact'), 404, 'not-found');
    err(await A.api.post(`/customers/${other.id}/redact`), 404, 'not-found');
    expect((await B.api.get(`/customers/${other.id}`)).body).toEqual(other);
  });
});

describe('GET /customers/{id}/data-export', () => {
  test('{customer, orders}: everything stored, the orders in full with their comments', async () => {
    const c = await createCustomer({ email: `${P}.Export@Example.com`, phone: '9', tags: ['x'], addresses: [ADDRESS] });
    const o1 = await createOrder({ customerId: c.id });
    const o2 = await createOrder({ customerId: c.id });
    await createOrder();
    expect((await A.api.post(`/orders/${o1._id}/comments`, { comment: 'called the customer' })).status).toBe(200);

    const res = await A.api.get(`/customers/${c.id}/data-export`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['customer', 'orders']);
    expect(res.body.customer).toEqual({
      id: c.id,
      name: c.name,
      email: c.email,
      emailKey: c.email.toLowerCase(),
      phone: '9',
      addresses: [ADDRESS],
      tags: ['x'],
      version: 1,
      createdAt: c.createdAt,
      updatedAt: c.updatedAt,
    });
    expect(res.body.orders.map((o: any) => o._id)).toEqual([o2._id, o1._id]);
    const [e2, e1] = res.body.orders;
    const { _links: _l, ...shown } = (await A.api.get(`/orders/${o1._id}`)).body.data;
    expect(e1).toMatchObject(shown);
    expect(e1.customerId).toBe(c.id);
    expect(e1.audit.map((a: any) => a.type)).toEqual(['created']);
    expect(e1.comments).toEqual([
      expect.objectContaining({ orderId: o1._id, comment: 'called the customer', actor: A.keyId }),
    ]);
    expect(e2.comments).toEqual([]);
    expect(JSON.stringify(res.body)).not.toContain(A.tenantId);
  });

  test('after redaction the export holds no personal data of the customer', async () => {
    const c = await createCustomer({ email: email(), phone: '555-0199', notes: 'secret note' });
    await createOrder({ customerId: c.id });
    await A.api.post(`/customers/${c.id}/redact`);
    const res = await A.api.get(`/customers/${c.id}/data-export`);
    expect(res.body.customer).toMatchObject({ name: 'Redacted customer', redactedAt: expect.any(String) });
    for (const gone of ['email', 'emailKey', 'phone', 'taxId', 'notes'])
      expect(res.body.customer).not.toHaveProperty(gone);
    expect(JSON.stringify(res.body)).not.toMatch(/555-0199|secret note|Ana López|Reforma/);
  });

  test('unknown or other-tenant customer: 404', async () => {
    const other = await createCustomer({}, B);
    err(await A.api.get(`/customers/${other.id}/data-export`), 404, 'not-found');
    err(await A.api.get('/customers/0123456789abcdef01234567/data-export'), 404, 'not-found');
  });
});

describe('isolation and scopes', () => {
  test('an e-mail is unique per tenant only', async () => {
    const mail = email();
    await createCustomer({ email: mail });
    await createCustomer({ email: mail }, B);
  });

  test('no credentials: 401', async () => {
    err(await new ApiClient().get('/customers'), 401, 'auth:invalid_token');
  });

  test('a key without customers:update cannot create, change, delete or redact (403), and nothing is written', async () => {
    const c = await createCustomer({ email: email() });
    const readOnly = await keyWith(A, ['customers:read', 'orders:read']);
    const before = await stored(A);
    err(await readOnly.post('/customers', { name: 'X' }), 403, 'auth:permission_denied');
    err(await readOnly.patch(`/customers/${c.id}`, { name: 'X' }), 403, 'auth:permission_denied');
    err(await readOnly.delete(`/customers/${c.id}`), 403, 'auth:permission_denied');
    err(await readOnly.post(`/customers/${c.id}/redact`), 403, 'auth:permission_denied');
    expect(await stored(A)).toEqual(before);
    expect((await readOnly.get(`/customers/${c.id}`)).body).toEqual(c);
    expect((await readOnly.get(`/customers/${c.id}/orders`)).status).toBe(200);
    expect((await readOnly.get(`/customers/${c.id}/data-export`)).status).toBe(200);
  });

  test('a key without customers:read cannot read any of it (403)', async () => {
    const c = await createCustomer();
    const writeOnly = await keyWith(A, ['customers:update', 'orders:read']);
    for (const path of [
      '/customers',
      `/customers/${c.id}`,
      `/customers/${c.id}/orders`,
      `/customers/${c.id}/data-export`,
    ])
      err(await writeOnly.get(path), 403, 'auth:permission_denied');
  });

  test("reading a customer's orders or its data export also needs orders:read (403 without)", async () => {
    const c = await createCustomer();
    const noOrders = await keyWith(A, ['customers:read', 'customers:update']);
    expect((await noOrders.get(`/customers/${c.id}`)).status).toBe(200);
    err(await noOrders.get(`/customers/${c.id}/orders`), 403, 'auth:permission_denied');
    err(await noOrders.get(`/customers/${c.id}/data-export`), 403, 'auth:permission_denied');
  });
});

describe('races', () => {
  /** Runs `fn` after `round` ms: successive rounds move one request along the other's steps. */
  const later = <T>(round: number, fn: () => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      setTimeout(() => void fn().then(resolve, reject), round);
    });

  const orderNaming = (customerId: string) =>
    A.api.post('/orders', {
      externalId: `${P}-race-${++n}`,
      customerInfo: { name: 'Ana López', phone: '+52 55 1234' },
      shippingAddress: { street: 'Av. Reforma 1', city: 'CDMX', zipCode: '06600', country: 'MX' },
      customerId,
      items: [{ sku: SKU, quantity: 1 }],
    });

  test('delete and an order naming the customer at once: no order is ever left naming a missing customer', async () => {
    for (let round = 0; round < 30; round++) {
      const c = await createCustomer({ email: email() });
      // the order starts first, the delete a little later each round, so the two meet at every step
      const [order, del] = await Promise.all([
        orderNaming(c.id),
        later(round, () => A.api.delete(`/customers/${c.id}`)),
      ]);
      expect([200, 409]).toContain(del.status);
      expect([201, 400]).toContain(order.status);
      const listed = await deps.db.collection('orders').countDocuments({ tenantId: A.tenantId, customerId: c.id });
      const customer = await A.api.get(`/customers/${c.id}`);
      if (listed) expect(customer.status).toBe(200);
      if (order.status === 201) expect(del.status).toBe(409);
      if (del.status === 200) expect(listed).toBe(0);
    }
  });

  test("redact and an order naming the customer at once: an order that stays has the customer's fields redacted", async () => {
    for (let round = 0; round < 30; round++) {
      const c = await createCustomer({ email: email() });
      const [order, redact] = await Promise.all([
        orderNaming(c.id),
        later(round, () => A.api.post(`/customers/${c.id}/redact`)),
      ]);
      expect(redact.status).toBe(200);
      expect([201, 400]).toContain(order.status);
      const orders = (await A.api.get(`/customers/${c.id}/orders`)).body.orders;
      expect(orders).toHaveLength(order.status === 201 ? 1 : 0);
      for (const o of orders) {
        expect(o.customerInfo).toEqual({ name: 'Redacted customer', phone: '[redacted]' });
        expect(o.shippingAddress.street).toBe('[redacted]');
      }
    }
  });

  test('linking an existing order while the customer is deleted: a refused link leaves the order as it was', async () => {
    for (let round = 0; round < 30; round++) {
      const c = await createCustomer();
      const order = await createOrder();
      const [link, del] = await Promise.all([
        A.api.put(`/orders/${order._id}`, { customerId: c.id, notes: `round ${round}` }),
        later(round, () => A.api.delete(`/customers/${c.id}`)),
      ]);
      expect([200, 400]).toContain(link.status);
      expect([200, 409]).toContain(del.status);
      const read = (await A.api.get(`/orders/${order._id}`)).body.data;
      if (link.status === 200) {
        expect(del.status).toBe(409);
        expect((await A.api.get(`/customers/${c.id}`)).status).toBe(200);
        expect(read.customerId).toBe(c.id);
      } else {
        expect(read).toEqual(order);
      }
    }
  });

  test('two customers taking one e-mail at once (update and create): exactly one gets it', async () => {
    for (let round = 0; round < 8; round++) {
      const mail = email('both');
      const c = await createCustomer();
      const [patched, created] = await Promise.all([
        A.api.patch(`/customers/${c.id}`, { email: mail.toUpperCase() }),
        A.api.post('/customers', { name: 'Other', email: mail }),
      ]);
      expect([patched.status, created.status].sort()).toEqual(patched.status === 200 ? [200, 409] : [201, 409]);
      const holders = await A.api.get('/customers', { query: { q: mail } });
      expect(holders.body.totalCount).toBe(1);
    }
  });

  test('concurrent changes of one customer are each applied (none is lost)', async () => {
    const c = await createCustomer();
    const answers = await Promise.all([
      A.api.patch(`/customers/${c.id}`, { phone: '111' }),
      A.api.patch(`/customers/${c.id}`, { taxId: 'T-222' }),
      A.api.patch(`/customers/${c.id}`, { notes: 'three' }),
      A.api.patch(`/customers/${c.id}`, { tags: ['four'] }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect((await A.api.get(`/customers/${c.id}`)).body).toMatchObject({
      phone: '111',
      taxId: 'T-222',
      notes: 'three',
      tags: ['four'],
    });
  });
});
