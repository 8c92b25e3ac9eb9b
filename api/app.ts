import Koa from 'koa';
import Router from '@koa/router';
import type { AppDeps } from './context';
import { errorHandler } from './middleware/errors';
import { requestLog } from './middleware/request-log';
import { mount, type RouteSpec } from './route';
import { allRoutes } from './routes';
import { buildOpenApi } from './openapi';
import { installWebhookRuntime } from '../shared/webhooks/runtime';

/** The Koa app over its dependencies; no listen here (server.ts and the tests do that). */
export function createApp(deps: AppDeps, routes: RouteSpec[] = allRoutes): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true; // errors are logged by the error middleware, once
  app.context.deps = deps;
  // the API fans out the events its requests record (shared/webhooks/runtime.ts)
  installWebhookRuntime({
    temporal: deps.temporal,
    taskQueue: deps.config.taskQueue,
    retryScale: deps.config.webhooks.retryScale,
    log: deps.log,
  });
  app.context.openapi = buildOpenApi(routes);

  const router = new Router();
  mount(router, routes, deps.config.bodyLimitBytes);
  // The spec's index puts the API under /v1 while its examples have no prefix: serve both.
  const v1 = new Router({ prefix: '/v1' });
  mount(v1, routes, deps.config.bodyLimitBytes);

  app.use(requestLog() as Koa.Middleware);
  app.use(errorHandler() as Koa.Middleware);
  app.use(router.routes());
  app.use(router.allowedMethods());
  app.use(v1.routes());
  app.use(v1.allowedMethods());
  return app;
}
