import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { TenantDb } from '../db/tenant-db';
import { carriedAppError } from '../errors/failures';
import { JOB_TYPE, TENANT_ID } from '../temporal/search-attributes';
import { workflowIdFor } from '../temporal/workflow-ids';
import { startWorkflow } from '../temporal/workflows';
import { canMove, NEEDS_REASON, type OrderState } from './lifecycle';
import { orderStock, type OrderStockInput } from './messages';
import { AppError } from '../errors/catalog';
import { MoveNeedsStock, orderErrors, Orders } from './service';
import type { OrderDoc } from './collections';
import type { MoveOutcome } from './stock';

/** States an order's stock was taken in: cancelling from them puts it back. */
const HOLDS_STOCK: ReadonlySet<OrderState> = new Set(['accepted', 'preparing']);

/** A move of this order to `to` must put its stock back (the stock workflow's cancel, not a plain update). */
export function putsStockBack(order: OrderDoc, to: OrderState): boolean {
  return to === 'cancelled' && !!order.stock && HOLDS_STOCK.has(order.orderStatus);
}

/**
 * Every lifecycle move of an order, whichever endpoint asks. A move that changes stock (to
 * accepted; to cancelled once stock was taken) runs as the order's stock workflow, started under
 * an id derived from the order: two concurrent acceptances cannot both run (the second is a 409),
 * and the workflow finishes what a killed API started. Other moves are one guarded update.
 */
export class OrderMoves {
  private readonly orders: Orders;

  constructor(
    db: Db,
    private readonly tenantDb: TenantDb,
    private readonly temporal: Client,
    private readonly taskQueue: string,
    private readonly actor: string,
  ) {
    this.orders = new Orders(db, tenantDb, actor);
  }

  async move(id: string, to: OrderState, via: string, reason?: string): Promise<MoveOutcome> {
    for (let decided = 0; ; decided++) {
      try {
        return await this.decide(id, to, via, reason);
      } catch (err) {
        // the order took stock after it was read (an acceptance won the race): decide again
        if (!(err instanceof MoveNeedsStock)) throw err;
        if (decided >= 3)
          throw new AppError(409, 'orders:conflict', `Order ${id} kept changing; read it again and retry`);
      }
    }
  }

  private async decide(id: string, to: OrderState, via: string, reason?: string): Promise<MoveOutcome> {
    const order = await this.orders.get(id);
    const from = order.orderStatus;
    const orderId = order._id.toHexString();
    if (!canMove(from, to)) throw orderErrors.invalidTransition(id, from, to);
    if (NEEDS_REASON.has(to) && !reason) throw orderErrors.invalid(`reason is required to move an order to ${to}`);
    if (to === 'accepted') return this.run('accept', orderId, via, reason);
    if (putsStockBack(order, to)) return this.run('cancel', orderId, via, reason);
    const moved = await this.orders.move(id, to, via, reason, (current) => !putsStockBack(current, to));
    return {
      orderId,
      externalId: moved.doc.externalId,
      orderStatus: moved.doc.orderStatus,
      previousStatus: moved.from,
      updatedAt: moved.doc.updatedAt.toISOString(),
    };
  }

  private async run(action: OrderStockInput['action'], orderId: string, via: string, reason?: string) {
    const prefix = action === 'accept' ? 'ordacc' : 'ordcnl';
    const input: OrderStockInput = {
      tenantId: this.tenantDb.tenantId,
      orderId,
      action,
      actor: this.actor,
      via,
      reason,
    };
    let handle;
    try {
      handle = await startWorkflow(this.temporal, orderStock, input, {
        taskQueue: this.taskQueue,
        workflowId: workflowIdFor(this.tenantDb.tenantId, `${prefix}_${orderId}`),
        workflowIdConflictPolicy: 'FAIL',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        typedSearchAttributes: [
          { key: TENANT_ID, value: this.tenantDb.tenantId },
          { key: JOB_TYPE, value: `order-${action}` },
        ],
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      throw new AppError(
        409,
        'orders:invalid_transition',
        `Order ${orderId} is being ${action === 'accept' ? 'accepted' : 'cancelled'} by another request; read it again`,
      );
    }
    try {
      return await handle.result();
    } catch (err) {
      throw carriedAppError(err) ?? err;
    }
  }
}
