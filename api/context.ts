import type { Db } from 'mongodb';
import type { Client } from '@temporalio/client';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Logger } from 'pino';
import type { ParameterizedContext } from 'koa';
import type { Config } from '../shared/config';
import type { Area } from '../shared/errors/catalog';
import type { Principal, Tenancy } from '../shared/auth/tenancy';
import type { TenantDb } from '../shared/db/tenant-db';
import type { Jobs } from '../shared/jobs/jobs';
import type { KeyedRun } from '../shared/idempotency/keys';
import { derivedId, derivedObjectId } from '../shared/ids';
import type { ObjectId } from 'mongodb';

/** What the API process is built from; tests build the same app over the same kinds of things. */
export interface AppDeps {
  config: Config;
  db: Db;
  tenancy: Tenancy;
  temporal: Client;
  /** Starts jobs as workflows and finds a tenant's jobs (job id → workflow id). */
  jobs: Jobs;
  s3: S3Client;
  log: Logger;
}

export interface AppState {
  requestId: string;
  area: Area;
  /** Set by the auth middleware on every authenticated route. */
  principal?: Principal;
  tenantDb?: TenantDb;
  /** The matched route's path template, for the request log. */
  route?: string;
  /** The query string after validation and coercion, when the route declares a query schema. */
  query?: Record<string, unknown>;
  /** The run of a request sent with an Idempotency-Key, on routes that keep their answer. */
  keyedRun?: KeyedRun;
  /**
   * On routes that start jobs: the Idempotency-Key with the time its binding was made, so a key
   * reused after its 24 hours names a new job, not the one its first use started.
   */
  jobKey?: string;
}

export type AppContext = ParameterizedContext<AppState> & {
  params: Record<string, string>;
  deps: AppDeps;
  /** The OpenAPI document, assembled once from the route declarations. */
  openapi: Record<string, unknown>;
  request: { body?: unknown };
};

/** The authenticated parts of the state; handlers of authenticated routes use this. */
export function tenantOf(ctx: AppContext): { principal: Principal; tenantDb: TenantDb } {
  const { principal, tenantDb } = ctx.state;
  if (!principal || !tenantDb) throw new Error('Route handler reached without authentication');
  return { principal, tenantDb };
}

/** The request's body as the route's schema validated it (api/route.ts): its shape is the route's to name. */
export function validBody<T>(ctx: AppContext): T {
  return ctx.request.body as T;
}

/** A client's Idempotency-Key, if it sent one: a retried request answers as the first. */
export function idempotencyKeyOf(ctx: AppContext): string | undefined {
  return ctx.state.jobKey ?? (ctx.get('idempotency-key') || undefined);
}

/**
 * The id a create gives its new record when the request came with an Idempotency-Key: derived
 * from the key's run, so a retry that takes over a request that died after the insert finds the
 * record (createOnce) instead of making a second one. Undefined without a key: a new id.
 */
export function createdId(ctx: AppContext, prefix: string): string | undefined {
  const run = ctx.state.keyedRun;
  return run && derivedId(prefix, `${ctx.state.tenantDb?.tenantId}:${run.runId}`, run.startedAt);
}

/** As createdId, for records whose id is an ObjectId. */
export function createdObjectId(ctx: AppContext): ObjectId | undefined {
  const run = ctx.state.keyedRun;
  return run && derivedObjectId(`${ctx.state.tenantDb?.tenantId}:${run.runId}`);
}
