import type { RouteSpec } from './route';
import { systemRoutes } from './system/routes';
import { productRoutes } from './products/routes';
import { orderRoutes } from './orders/routes';
import { csvRoutes } from './csv/routes';
import { csvAsyncRoutes } from './csv/async';
import { bulkRoutes } from './bulk/routes';
import { stockRoutes } from './inventory/stock';
import { transferRoutes } from './inventory/transfers';

/** Every route of the API, by domain. Static paths come before `/:id` within a domain. */
export const allRoutes: RouteSpec[] = [...systemRoutes, ...csvRoutes, ...csvAsyncRoutes, ...bulkRoutes, ...stockRoutes, ...transferRoutes, ...productRoutes, ...orderRoutes];
