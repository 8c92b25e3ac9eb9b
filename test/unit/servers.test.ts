import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryPath, ensureServerBuilt, SERVERS } from '../../scripts/stack/servers';

test('without Go and without an address, the message says what to install or set', () => {
  const cache = mkdtempSync(join(tmpdir(), 'backoffice-nogo-'));
  const saved = process.env.XDG_CACHE_HOME;
  process.env.XDG_CACHE_HOME = cache; // an empty cache: every server is "missing"
  try {
    expect(() => ensureServerBuilt(SERVERS.ferretdb, () => undefined, ['no-such-go-binary'])).toThrow(
      /Go is not installed.*FerretDB|Go is not installed.*ferretdb.*MONGODB_URI/s,
    );
    expect(() => ensureServerBuilt(SERVERS.temporal, () => undefined, ['no-such-go-binary'])).toThrow(
      /TEMPORAL_ADDRESS/,
    );
    expect(() => ensureServerBuilt(SERVERS.minio, () => undefined, ['no-such-go-binary'])).toThrow(/S3_ENDPOINT/);
  } finally {
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
    rmSync(cache, { recursive: true, force: true });
  }
});

test('a built server is found in the cache and not rebuilt', () => {
  // the suite's stack is running on these binaries, so they exist; no Go is needed to find them
  expect(ensureServerBuilt(SERVERS.temporal, () => undefined, ['no-such-go-binary'])).toBe(
    binaryPath(SERVERS.temporal),
  );
});
