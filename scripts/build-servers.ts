import { ensureServerBuilt, SERVERS, toolsDir } from './stack/servers';

/**
 * `npm run servers`: builds every embedded server that is missing (a cold build takes minutes;
 * later runs find them in the cache and return at once). Roles given by address are skipped.
 */
const skip: Record<string, string | undefined> = {
  temporal: process.env.TEMPORAL_ADDRESS,
  ferretdb: process.env.MONGODB_URI,
  minio: process.env.S3_ENDPOINT,
};

try {
  for (const server of Object.values(SERVERS)) {
    if (skip[server.name]) {
      console.log(`${server.name}: external (${skip[server.name]}), not built`);
      continue;
    }
    console.log(`${server.name} ${server.version}: ${ensureServerBuilt(server)}`);
  }
  console.log(`servers ready in ${toolsDir()}`);
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
}
