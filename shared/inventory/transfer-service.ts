import { ApplicationFailure } from '@temporalio/common';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { TenantDb } from '../db/tenant-db';
import { AppError } from '../errors/catalog';
import { assertManualEdits } from './handlers';
import { carriedAppError } from '../errors/failures';
import { newId } from '../ids';
import { Locations } from '../locations/locations';
import { pageWindow, type PageRequest } from '../paging';
import { Catalog } from '../products/catalog';
import { JOB_TYPE, TENANT_ID } from '../temporal/search-attributes';
import { workflowIdFor } from '../temporal/workflow-ids';
import { startWorkflow, workflowHandle } from '../temporal/workflows';
import { transfer as transferWorkflow, transferUpdates, type TransferActionArgs, type TransferInput } from './messages';
import {
  MAX_TRANSFER_QUANTITY,
  TRANSFER_MOVES,
  transferStateCode,
  type TransferAction,
  type TransferLine,
  type TransferStatus,
} from './transfer-rules';
import { transferEvent, transfers, type TransferDoc, type TransferEvent } from './transfers';
import { recordAround } from '../webhooks/events';

/** A transfer as a client asks for it; the shape is already validated (the route's schema). */
export interface NewTransfer {
  originId: string;
  destinationId: string;
  productsList: TransferLine[];
  notes?: string | null;
}

export interface TransferActionOptions {
  reason?: string;
  /** The request's Idempotency-Key: the Update's id, and the key a retried receive is recognised by. */
  idempotencyKey?: string;
}

const PAST_TENSE: Record<TransferAction, string> = { approve: 'approved', receive: 'received', cancel: 'cancelled' };

function notFound(id: string): AppError {
  return new AppError(404, 'not-found', `No transfer ${id}`);
}

/** An action refused in a state: the 409 names the state, in its code and in details.currentState. */
function refusedInState(transferId: string, action: TransferAction, state: string, message?: string): AppError {
  return new AppError(
    409,
    transferStateCode(state as TransferStatus),
    message ?? `A ${state} transfer cannot be ${PAST_TENSE[action]}`,
    { details: { transferId, action, currentState: state, allowedFrom: TRANSFER_MOVES[action].from } },
  );
}

/** The workflow's own refusal (its validator or handler saw a state the action may not start from). */
function stateRefusal(err: unknown): ApplicationFailure | null {
  for (let cause = err, depth = 0; cause && depth < 10; cause = (cause as { cause?: unknown }).cause, depth++)
    if (cause instanceof ApplicationFailure && cause.type?.startsWith('conflict/transfer-')) return cause;
  return null;
}

/** Whether this action, under this key, is the one already applied to the transfer. */
function isRetry(t: TransferDoc, action: TransferAction, key: string | undefined): boolean {
  if (key === undefined) return false;
  if (action === 'approve') return t.approveKey === key;
  if (action === 'receive') return t.status === 'received' && t.receiveKey === key;
  return t.status === 'cancelled' && t.cancelKey === key;
}

/**
 * Transfers of stock between two locations, as use cases: each transfer is the workflow
 * `<tenantId>/<transferId>`, which owns its state; approve / receive / cancel are its Updates.
 * Every method takes the tenant's database first.
 */
export class TransferService {
  constructor(
    private readonly temporal: Client,
    private readonly taskQueue: string,
  ) {}

  async get(tenantDb: TenantDb, id: string): Promise<TransferDoc> {
    const t = await tenantDb.collection(transfers).findOne({ _id: id });
    if (!t) throw notFound(id);
    return t;
  }

  /** Newest first. */
  async list(
    tenantDb: TenantDb,
    q: PageRequest & { status?: TransferStatus },
  ): Promise<{ transfers: TransferDoc[]; totalCount: number }> {
    const col = tenantDb.collection(transfers);
    const filter = q.status ? { status: q.status } : {};
    const [rows, totalCount] = await Promise.all([
      col.find(filter, { sort: { createdAt: -1, _id: -1 }, ...pageWindow(q) }).toArray(),
      col.countDocuments(filter),
    ]);
    return { transfers: rows, totalCount };
  }

  /**
   * A pending transfer and its workflow. Lines naming the same SKU (in any case) become one line;
   * both locations and every SKU must exist. No workflow, no transfer: the record is removed when
   * the start fails.
   */
  async create(tenantDb: TenantDb, actor: string, input: NewTransfer, id = newId('trf')): Promise<TransferDoc> {
    if (input.originId === input.destinationId)
      throw new AppError(400, 'bad-request/same-location', 'originId and destinationId must differ', {
        field: 'destinationId',
      });
    const merged = new Map<string, number>();
    for (const line of input.productsList) {
      const sku = line.sku.trim().toUpperCase();
      merged.set(sku, (merged.get(sku) ?? 0) + line.quantity);
    }
    // lines of one SKU are merged: the merged line is held to the limit one line has
    for (const [sku, quantity] of merged)
      if (quantity > MAX_TRANSFER_QUANTITY)
        throw new AppError(
          400,
          'bad-request/invalid-items',
          `The lines of ${sku} add up to ${quantity} units; a transfer moves at most ${MAX_TRANSFER_QUANTITY} of a SKU`,
          { field: 'productsList' },
        );
    const locations = new Locations(tenantDb);
    await locations.require(input.originId);
    await locations.require(input.destinationId);
    const catalog = new Catalog(tenantDb);
    for (const sku of merged.keys())
      if (!(await catalog.skuOwner(sku)))
        throw new AppError(404, 'not-found', `No product or variant with SKU ${sku}`, { field: 'productsList' });
    // a transfer edits both balances of each SKU by hand (checked again before a receive moves them)
    await assertManualEdits(tenantDb, [...merged.keys()], [input.originId, input.destinationId]);

    const now = new Date();
    const productsList: TransferLine[] = [...merged].map(([sku, quantity]) => ({ sku, quantity }));
    const doc: TransferDoc = {
      _id: id,
      tenantId: tenantDb.tenantId,
      originId: input.originId,
      destinationId: input.destinationId,
      productsList,
      notes: input.notes ?? null,
      status: 'pending',
      workflowId: workflowIdFor(tenantDb.tenantId, id),
      createdBy: actor,
      createdAt: now,
      updatedAt: now,
      approvedAt: null,
      receivedAt: null,
      cancelledAt: null,
      cancelReason: null,
      receiveKey: null,
      history: [{ action: 'create', outcome: 'applied', state: 'pending', actor, at: now }],
    };
    const col = tenantDb.collection(transfers);
    const workflowInput: TransferInput = {
      tenantId: tenantDb.tenantId,
      transferId: id,
      originId: input.originId,
      destinationId: input.destinationId,
      productsList,
    };
    const change = { type: 'transfer.created', key: `transfer:${id}:pending`, kind: 'transfer', id };
    return recordAround(
      tenantDb,
      change,
      async () => {
        // a retry of a request that died after its insert finds the transfer and makes sure it runs
        const earlier = await col.insertOnce(doc);
        // read after the insert (a location's delete marks it before it looks for open transfers):
        // a transfer to or from a location deleted meanwhile is no transfer
        if (!earlier) await this.keepOffDeleted(tenantDb, doc);
        try {
          await startWorkflow(this.temporal, transferWorkflow, workflowInput, {
            taskQueue: this.taskQueue,
            workflowId: doc.workflowId,
            workflowIdConflictPolicy: 'FAIL',
            // a transfer's workflow runs once: never a second run after it ended
            workflowIdReusePolicy: 'REJECT_DUPLICATE',
            typedSearchAttributes: [
              { key: TENANT_ID, value: tenantDb.tenantId },
              { key: JOB_TYPE, value: 'inventory-transfer' },
            ],
          });
        } catch (err) {
          if (earlier && err instanceof WorkflowExecutionAlreadyStartedError) return earlier;
          if (!earlier) await col.deleteById(id);
          throw err;
        }
        return earlier ?? doc;
      },
      transferEvent,
    );
  }

  /**
   * Drops a transfer just recorded whose origin or destination a delete took (or is taking) in the
   * meantime: 404 not-found/location, or 409 while a delete did not decide in time.
   */
  private async keepOffDeleted(tenantDb: TenantDb, doc: TransferDoc): Promise<void> {
    const locations = new Locations(tenantDb);
    for (const [field, id] of [
      ['originId', doc.originId],
      ['destinationId', doc.destinationId],
    ] as const) {
      const standing = await locations.decidedStanding(id);
      if (standing === 'ok') continue;
      await tenantDb.collection(transfers).deleteById(doc._id);
      if (standing === 'gone') throw new AppError(404, 'not-found/location', `No location ${id}`, { field });
      throw new AppError(409, 'conflict', `Location ${id} is being deleted; retry`, { field });
    }
  }

  /**
   * Runs one action as an Update of the transfer's workflow and answers the transfer after it.
   * A refusal (the state does not allow the action, or the origin lacks stock) is a 409, and the
   * refused attempt is kept in the transfer's history. An action retried with the Idempotency-Key
   * of the one that succeeded answers the transfer again, even after the workflow has ended;
   * a request refused is not remembered, so its retry under the same key is tried again.
   */
  async act(
    tenantDb: TenantDb,
    actor: string,
    id: string,
    action: TransferAction,
    options: TransferActionOptions = {},
  ): Promise<TransferDoc> {
    const t = await this.get(tenantDb, id);
    const key = options.idempotencyKey;
    if (isRetry(t, action, key)) return t;
    const args: TransferActionArgs = {
      actor,
      ...(options.reason !== undefined ? { reason: options.reason } : {}),
      ...(key ? { idempotencyKey: key } : {}),
    };
    try {
      await workflowHandle(this.temporal, transferWorkflow, t.workflowId).executeUpdate(transferUpdates[action], {
        args: [args],
        // Temporal keeps an Update's outcome by its id, refusals too: the id names the transfer's
        // history as this request found it, so a retry of a refused request (a refusal is
        // recorded in the history) is judged afresh, while retries of one attempt still share it
        ...(key ? { updateId: `${action}:${key}:${t.history.length}` } : {}),
      });
    } catch (err) {
      const refusal = await this.refusalOf(tenantDb, t, action, key, err);
      if (!(refusal instanceof AppError)) return refusal;
      await this.recordRefused(tenantDb, t, action, actor, refusal);
      throw refusal;
    }
    return this.get(tenantDb, id);
  }

  /**
   * What a failed Update means for the client: a refusal to answer, the transfer itself (a
   * retried action that had already succeeded), or the failure again when it is none of those.
   */
  private async refusalOf(
    tenantDb: TenantDb,
    t: TransferDoc,
    action: TransferAction,
    key: string | undefined,
    err: unknown,
  ): Promise<AppError | TransferDoc> {
    const byState = stateRefusal(err);
    if (byState)
      return refusedInState(t._id, action, byState.type!.slice('conflict/transfer-'.length), byState.message);
    // a domain refusal from an activity (insufficient stock), carried across Temporal as itself
    const carried = carriedAppError(err);
    if (carried) {
      const details = (carried.extra.details as Record<string, unknown> | undefined) ?? {};
      return new AppError(carried.status, carried.code, carried.message, {
        ...carried.extra,
        details: { transferId: t._id, ...details },
      });
    }
    // the workflow has ended (received or cancelled): the record says how
    const now = await tenantDb.collection(transfers).findOne({ _id: t._id });
    if (!now || (now.status !== 'received' && now.status !== 'cancelled')) throw err;
    if (isRetry(now, action, key)) return now;
    return refusedInState(t._id, action, now.status);
  }

  private async recordRefused(
    tenantDb: TenantDb,
    t: TransferDoc,
    action: TransferAction,
    actor: string,
    refusal: AppError,
  ): Promise<void> {
    const state = ((refusal.extra.details as { currentState?: string } | undefined)?.currentState ??
      t.status) as TransferStatus;
    const event: TransferEvent = {
      action,
      outcome: 'refused',
      state,
      actor,
      at: new Date(),
      ...(refusal.code === 'conflict/insufficient-stock' ? { reason: 'insufficient stock' } : {}),
    };
    await tenantDb.collection(transfers).updateById(t._id, { $push: { history: event } });
  }
}
