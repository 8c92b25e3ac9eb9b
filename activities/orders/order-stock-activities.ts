import { heartbeat } from '@temporalio/activity';
import type { ActivityDeps } from '../index';
import { TenantDb } from '../../shared/db/tenant-db';
import type { OrderStockEffects } from '../../shared/orders/collections';
import { OrderStock, type OrderStockPlan } from '../../shared/orders/stock';

interface Step {
  tenantId: string;
  orderId: string;
  actor: string;
}

const beat = () => heartbeat();

/** The steps of the order stock workflow; each is safe to run again (shared/orders/stock.ts). */
export function orderStockActivities(deps: ActivityDeps) {
  const stock = (s: Step) => new OrderStock(new TenantDb(deps.db, s.tenantId), s.actor);
  return {
    planOrderStock: (s: Step & { runId: string }) => stock(s).plan(s.orderId, s.runId, beat),
    // the line loops heartbeat: a killed worker's step is handed on within the heartbeat timeout
    applyOrderSales: (s: Step & { plan: OrderStockPlan }) => stock(s).applySales(s.orderId, s.plan, beat),
    consumeOrderMaterials: (s: Step & { plan: OrderStockPlan }) => stock(s).consumeMaterials(s.orderId, s.plan),
    markOrderAccepted: (s: Step & { plan: OrderStockPlan; runId: string; via: string; reason?: string }) =>
      stock(s).markAccepted(s.orderId, s.plan, s.runId, s.via, s.reason),
    markOrderCancelled: (s: Step & { runId: string; via: string; reason?: string }) =>
      stock(s).markCancelled(s.orderId, s.runId, s.via, s.reason),
    returnOrderStock: (s: Step & { effects: Pick<OrderStockEffects, 'locationId' | 'sales' | 'consumptionId'> }) =>
      stock(s).returnStock(s.orderId, s.effects, beat),
    recordOrderStockReturned: (s: Step & { runId: string; effects: OrderStockEffects }) =>
      stock(s).recordReturned(s.orderId, s.runId, s.effects),
  };
}
