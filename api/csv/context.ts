import { tenantOf, type AppContext } from '../context';
import { CsvJobs } from '../../shared/csv/async-jobs';
import { CsvSync } from '../../shared/csv/sync-service';

// What the CSV routes take from a request: the tenant's services, the validated body, the Idempotency-Key.

/** The async CSV flow of the request's tenant. */
export function csvJobs(ctx: AppContext): CsvJobs {
  const { deps } = ctx;
  return new CsvJobs({
    tenantDb: tenantOf(ctx).tenantDb,
    s3: deps.s3,
    bucket: deps.config.s3.bucket,
    jobs: deps.jobs,
    temporal: deps.temporal,
  });
}

/** The request's body, as the route's schema validated it. */
export function bodyOf<T>(ctx: AppContext): T {
  return ctx.request.body as unknown as T;
}

/** A client's Idempotency-Key: a retried start answers the same job. */
export function idempotencyKeyOf(ctx: AppContext): string | undefined {
  return ctx.get('idempotency-key') || undefined;
}

/** The synchronous CSV use cases of the request's tenant. */
export function csvSync(ctx: AppContext): CsvSync {
  return new CsvSync(tenantOf(ctx).tenantDb);
}
