import { ChannelServer } from '../helpers/channel-server';
import { ApiClient } from '../helpers/client';
import { TestDeps } from '../helpers/stack';
import { isFinished } from '../../shared/jobs/collection';

/** A tenant, its channel server and helpers to make channels and products and wait for a publication. */
export const SECRET = 'test-signing-secret-0123456789';

export interface Harness {
  deps: TestDeps;
  api: ApiClient;
  tenantId: string;
  server: ChannelServer;
  channel(o?: { settings?: Record<string, unknown>; type?: string }): Promise<string>;
  product(o?: Record<string, unknown>): Promise<{ id: string; sku: string }>;
  finished(jobId: string): Promise<any>;
}

export async function openHarness(prefix: string): Promise<Harness> {
  const deps = await TestDeps.open();
  const t = await deps.tenantWithKey();
  const api = new ApiClient(t.key);
  const server = await new ChannelServer(SECRET).start();
  let n = 0;
  const P = `${prefix}${Date.now().toString(36).toUpperCase()}`;
  return {
    deps,
    api,
    tenantId: t.tenantId,
    server,
    async channel(o = {}) {
      const res = await api.post('/channels', {
        name: `Channel ${++n}`,
        type: o.type ?? 'custom',
        settings: { endpointUrl: server.url, ...o.settings },
        secret: SECRET,
      });
      expect(res.status).toBe(201);
      return res.body.id as string;
    },
    async product(o = {}) {
      const sku = `${P}-${++n}`;
      const res = await api.post('/products', {
        sku,
        title: { value: `Product ${n}` },
        price: 10,
        status: 'active',
        brand: 'Acme',
        category: { name: 'Tools', path: 'Home > Tools' },
        media: [{ src: `https://img.example.com/${n}.jpg`, name: 'front', alt: { value: 'front' }, position: 0 }],
        ...o,
      });
      if (res.status !== 201) throw new Error(`product not created: ${JSON.stringify(res.body)}`);
      return res.body as { id: string; sku: string };
    },
    async finished(jobId: string) {
      for (let i = 0; i < 1200; i++) {
        const res = await api.get(`/products/export/${jobId}`);
        expect(res.status).toBe(200);
        if (isFinished(res.body.status)) return res.body;
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error('publication did not finish');
    },
  };
}

export async function closeHarness(h: Harness | undefined): Promise<void> {
  await h?.server.close();
  await h?.deps.close();
}
