import { defineWorkflow } from '../temporal/define-workflow';
import type { MoveOutcome } from './stock';

export interface OrderStockInput {
  tenantId: string;
  orderId: string;
  /** accept takes the order's stock and moves it to accepted; cancel moves it to cancelled and puts its stock back. */
  action: 'accept' | 'cancel';
  /** The API key that asked. */
  actor: string;
  /** The endpoint that asked (accept, status, transition, cancel). */
  via: string;
  reason?: string;
}

/**
 * The stock side of one order move, `<tenantId>/ordacc_<orderId>` or `<tenantId>/ordcnl_<orderId>`:
 * a killed worker or API never applies a sale twice nor loses a restock, because the workflow
 * decides between steps and every step is keyed by its run.
 */
export const orderStock = defineWorkflow<OrderStockInput, MoveOutcome>('orderStockWorkflow');
