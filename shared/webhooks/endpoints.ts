import type { TenantDb } from '../db/tenant-db';
import { untilWritten } from '../db/until-written';
import { AppError, errors } from '../errors/catalog';
import { newId } from '../ids';
import { decryptSecret, encryptSecret } from '../secrets/crypto';
import type { WebhookSettings } from '../config';
import { isEventType } from './catalog';
import { webhookEndpoints, type WebhookEndpointDoc } from './collections';
import { endpointsChanged } from './events';
import { newSecret } from './signing';
import { targetRefusal } from './targets';

export interface EndpointInput {
  url: string;
  eventTypes: string[];
  description?: string;
}

export interface EndpointPatch {
  url?: string;
  eventTypes?: string[];
  description?: string;
  status?: 'enabled' | 'disabled';
}

/** The longest overlap a rotation may ask for. */
export const MAX_OVERLAP_SECONDS = 7 * 24 * 3600;

export const webhookErrors = {
  notFound: (id: string) =>
    errors.notFound('not-found', `No webhook endpoint ${JSON.stringify(id.slice(0, 100))} in this tenant`),
  badUrl: (why: string) =>
    new AppError(400, 'validation-error', `url ${why}`, {
      field: 'url',
      fieldErrors: [{ field: 'url', message: why }],
    }),
  badEventTypes: (unknown: string[]) =>
    new AppError(
      400,
      'validation-error',
      `eventTypes: ${unknown.map((t) => JSON.stringify(t)).join(', ')} ${unknown.length === 1 ? 'is not an event type' : 'are not event types'}; GET /webhooks/event-types lists them (or use "*")`,
      { field: 'eventTypes', fieldErrors: [{ field: 'eventTypes', message: 'unknown event type' }] },
    ),
  conflict: (id: string) =>
    new AppError(409, 'conflict', `Webhook endpoint ${id} kept changing; read it again and retry`),
};

/** The secrets an endpoint signs with now: the current one, and rotated-out ones still in their overlap. */
export function activeSecrets(doc: WebhookEndpointDoc, secretsKey: string, now = new Date()): string[] {
  return doc.secrets.filter((s) => !s.expiresAt || s.expiresAt > now).map((s) => decryptSecret(s.secret, secretsKey));
}

/** A tenant's webhook endpoints: what they receive, where, signed with which secret. */
export class WebhookEndpoints {
  constructor(
    private readonly tenantDb: TenantDb,
    private readonly settings: WebhookSettings,
    private readonly secretsKey: string,
  ) {}

  private get endpoints() {
    return this.tenantDb.collection(webhookEndpoints);
  }

  async require(id: string): Promise<WebhookEndpointDoc> {
    const doc = await this.endpoints.findOne({ _id: id });
    if (!doc) throw webhookErrors.notFound(id);
    return doc;
  }

  async list(): Promise<WebhookEndpointDoc[]> {
    return this.endpoints.find({}, { sort: { createdAt: -1 } }).toArray();
  }

  private async check(input: { url?: string; eventTypes?: string[] }): Promise<void> {
    if (input.eventTypes) {
      const unknown = input.eventTypes.filter((t) => t !== '*' && !isEventType(t));
      if (unknown.length) throw webhookErrors.badEventTypes(unknown);
    }
    if (input.url !== undefined) {
      const why = await targetRefusal(input.url, this.settings);
      if (why) throw webhookErrors.badUrl(why);
    }
  }

  /** Creates an endpoint; the answer is the only time its secret is shown (besides a rotation's). */
  /**
   * `id`: derived from the request's Idempotency-Key, so a retry of a request that died finds the
   * endpoint it made, and answers its secret (insertOnce).
   */
  async create(input: EndpointInput, id = newId('we')): Promise<{ doc: WebhookEndpointDoc; secret: string }> {
    await this.check(input);
    const secret = newSecret();
    const now = new Date();
    const doc: Omit<WebhookEndpointDoc, 'tenantId'> = {
      _id: id,
      url: input.url,
      eventTypes: [...new Set(input.eventTypes)],
      description: input.description ?? '',
      status: 'enabled',
      secrets: [{ secret: encryptSecret(secret, this.secretsKey), createdAt: now }],
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    const earlier = await this.endpoints.insertOnce(doc);
    endpointsChanged(this.tenantDb);
    if (earlier) return { doc: earlier, secret: decryptSecret(earlier.secrets[0].secret, this.secretsKey) };
    return { doc: { ...doc, tenantId: this.tenantDb.tenantId }, secret };
  }

  /** Partial update, guarded by the version read. Enabling clears the failure record. */
  async update(id: string, patch: EndpointPatch): Promise<WebhookEndpointDoc> {
    await this.check(patch);
    return this.write(id, (current) => {
      const set: Record<string, unknown> = {};
      const unset: Record<string, ''> = {};
      if (patch.url !== undefined) set.url = patch.url;
      if (patch.eventTypes !== undefined) set.eventTypes = [...new Set(patch.eventTypes)];
      if (patch.description !== undefined) set.description = patch.description;
      if (patch.status === 'enabled' && current.status !== 'enabled') {
        set.status = 'enabled';
        Object.assign(unset, { disabledReason: '', disabledAt: '', failingSince: '' });
      }
      if (patch.status === 'disabled' && current.status !== 'disabled')
        Object.assign(set, { status: 'disabled', disabledReason: 'manual', disabledAt: new Date() });
      return { set, unset };
    });
  }

  /**
   * A new current secret; the one it replaces keeps signing for `overlapSeconds` (deliveries carry
   * both signatures meanwhile), and older ones stop at once.
   */
  async rotate(id: string, overlapSeconds: number): Promise<{ doc: WebhookEndpointDoc; secret: string }> {
    const secret = newSecret();
    const now = new Date();
    const doc = await this.write(id, (current) => {
      const previous = current.secrets.find((s) => !s.expiresAt);
      const kept =
        previous && overlapSeconds > 0
          ? [{ ...previous, expiresAt: new Date(now.getTime() + overlapSeconds * 1000) }]
          : [];
      return {
        set: { secrets: [{ secret: encryptSecret(secret, this.secretsKey), createdAt: now }, ...kept] },
        unset: {},
      };
    });
    return { doc, secret };
  }

  async delete(id: string): Promise<WebhookEndpointDoc> {
    const doc = await this.require(id);
    // of deletes at once, one deletes: the others find nothing, as a delete after it would
    if (!(await this.endpoints.deleteById(id))) throw webhookErrors.notFound(id);
    return doc;
  }

  private async write(
    id: string,
    plan: (current: WebhookEndpointDoc) => { set: Record<string, unknown>; unset: Record<string, ''> },
  ): Promise<WebhookEndpointDoc> {
    return untilWritten(
      async () => {
        const current = await this.require(id);
        const { set, unset } = plan(current);
        const written = await this.endpoints.findOneAndUpdate(
          { _id: id, version: current.version },
          {
            $set: { ...set, updatedAt: new Date() },
            ...(Object.keys(unset).length ? { $unset: unset } : {}),
            $inc: { version: 1 },
          } as never,
          { returnDocument: 'after' },
        );
        return written ?? undefined;
      },
      () => webhookErrors.conflict(id),
    );
  }
}
