import { tenantOf, type AppContext } from '../context';
import { CsvJobs } from '../../shared/csv/async-jobs';
import { CsvSync } from '../../shared/csv/sync-service';

// The CSV use cases of a request's tenant.

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

/** The synchronous CSV use cases of the request's tenant. */
export function csvSync(ctx: AppContext): CsvSync {
  return new CsvSync(tenantOf(ctx).tenantDb);
}
