/** An order as the support desk sees it. */
export interface Order {
  id: string;
  status: 'processing' | 'shipped' | 'delivered' | 'cancelled';
  eta: string | null;
}

/** The shop's orders: an in-memory table standing in for the real database. */
export const ORDERS: readonly Order[] = [
  { id: 'A-1001', status: 'processing', eta: '2026-12-09' },
  { id: 'A-1002', status: 'shipped', eta: '2026-12-07' },
  { id: 'A-1003', status: 'delivered', eta: null },
  { id: 'A-1004', status: 'cancelled', eta: null },
  { id: 'A-1005', status: 'shipped', eta: '2026-12-08' },
];

/** Order ids as customers write them: a letter, a dash, four digits. */
export const ORDER_ID = /\b[A-Z]-\d{4}\b/u;

/** One line the agent can quote: the order's status (and arrival date), or that there is no such order. */
export function orderStatusLine(orderId: string): string {
  const order = ORDERS.find((o) => o.id === orderId.trim().toUpperCase());
  if (!order) return `There is no order ${orderId}.`;
  return order.eta
    ? `Order ${order.id} is ${order.status}, arriving ${order.eta}.`
    : `Order ${order.id} is ${order.status}.`;
}
