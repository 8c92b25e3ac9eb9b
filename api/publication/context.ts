import { tenantOf, type AppContext } from '../context';
import type { PublicationContext } from '../../shared/publication/context';

/** The publication use cases' context for a request: its tenant and the process's connections. */
export function publicationContext(ctx: AppContext): PublicationContext {
  return {
    tenantDb: tenantOf(ctx).tenantDb,
    temporal: ctx.deps.temporal,
    jobs: ctx.deps.jobs,
    secretsKey: ctx.deps.config.secretsKey,
    syncMax: ctx.deps.config.publishSyncMax,
    log: ctx.deps.log,
  };
}
