/**
 * The order state machine (pure): pending → accepted → preparing → ready → shipped → delivered;
 * pending → rejected; pending, accepted or preparing → cancelled.
 */
export const ORDER_STATES = [
  'pending',
  'accepted',
  'preparing',
  'ready',
  'shipped',
  'delivered',
  'rejected',
  'cancelled',
] as const;
export type OrderState = (typeof ORDER_STATES)[number];

export const NEXT: Record<OrderState, OrderState[]> = {
  pending: ['accepted', 'rejected', 'cancelled'],
  accepted: ['preparing', 'cancelled'],
  preparing: ['ready', 'cancelled'],
  ready: ['shipped'],
  shipped: ['delivered'],
  delivered: [],
  rejected: [],
  cancelled: [],
};

/** The named lifecycle endpoints and the state each moves to. */
export const NAMED_MOVES = {
  accept: 'accepted',
  reject: 'rejected',
  cancel: 'cancelled',
  prepare: 'preparing',
} as const satisfies Record<string, OrderState>;
export type NamedMove = keyof typeof NAMED_MOVES;

/** Moves into these states must say why. */
export const NEEDS_REASON: ReadonlySet<OrderState> = new Set(['rejected', 'cancelled']);

export function canMove(from: OrderState, to: OrderState): boolean {
  return NEXT[from].includes(to);
}
