import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join, relative, resolve } from 'node:path';

/**
 * The embedded servers, each built once from a pinned Go module into a cache directory outside
 * the checkout (so a CI clone on the same machine reuses it) and skipped when already built.
 *
 * Pins differ from a plain `go install module@version` in two places, for reasons of the module
 * proxy this project is built with:
 * - FerretDB: the proxy refuses the module's version list, which `go install …@v1.24.2` needs, and
 *   upstream's cmd/ferretdb panics when built outside its repository (no version.txt). We build a
 *   small main of ours over FerretDB's embeddable package (scripts/servers/ferretdb, go.sum pinned),
 *   which also makes each write command atomic (serialize.go). Its cache key hashes that module.
 *   Files under its `_overlay/` replace or add files of the FerretDB module at build time (a
 *   patched copy of the module replaces it): the SQLite backend pushes query filters down into
 *   SQL (_overlay/internal/backends/sqlite/prefilter.go), a page's sort with them (sqlite/order.go,
 *   handler/sort_pushdown.go, handler/msg_find.go, backends/collection.go) and counts whose filter
 *   has an exact SQL form (sqlite/exact.go, count.go, handler/count_pushdown.go, msg_aggregate.go,
 *   msg_count.go, decorators/oplog/collection.go), index columns are spelled so that SQLite 3.46
 *   reads them from the index (sqlite/metadata/index_column.go, registry.go), the leak-detection tracking that
 *   cost 13% of its CPU is gone (_overlay/internal/util/resource/resource.go), and an update
 *   command closes each statement's query before the next (_overlay/internal/handler/msg_update.go:
 *   upstream held them all, and a bulk of 100 or more updates deadlocked every write).
 * - MinIO: the commit of RELEASE.2025-10-15T17-29-55Z is not served; the proxy serves one newer
 *   commit (2026-02-12, 7aac2a2c5b7c), which we pin instead.
 */
export interface ServerBuild {
  name: 'temporal' | 'ferretdb' | 'minio';
  version: string;
  binary: string;
  /** `go install <target>` run in `dir` (the repo root unless a module of ours is used). */
  target: string;
  dir?: string;
  /** Modules patched at build time (see patchedModFile). */
  patches?: ModulePatch[];
}

/**
 * A module built from a patched copy: the files under `<dir>/<overlay>/` (paths inside the module)
 * replace or add to its files, then each edit replaces one exact text of one file (for a generated
 * file too big to keep a copy of). An edit whose text is not found exactly once fails the build.
 */
export interface ModulePatch {
  module: string;
  overlay: string;
  edits?: { file: string; find: string; replace: string }[];
}

const ROOT = resolve(__dirname, '..', '..');
const FERRETDB_MODULE = join(ROOT, 'scripts', 'servers', 'ferretdb');
const TEMPORAL_MODULE = join(ROOT, 'scripts', 'servers', 'temporal');

/** Files of a directory tree, as paths relative to it, sorted. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath ?? e.path, e.name)))
    .sort();
}

/** Our FerretDB main changes with our code, so its cache key carries a hash of the module's files and patches. */
function moduleHash(dir: string, patches: ModulePatch[]): string {
  const hash = createHash('sha256');
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.go') || n === 'go.mod' || n === 'go.sum')
    .sort()) {
    hash.update(name).update(readFileSync(join(dir, name)));
  }
  for (const patch of patches) {
    const overlay = join(dir, patch.overlay);
    for (const name of filesUnder(overlay)) hash.update(name).update(readFileSync(join(overlay, name)));
    if (patch.edits) hash.update(JSON.stringify(patch.edits));
  }
  return hash.digest('hex').slice(0, 10);
}

/**
 * Go refuses `-overlay` for files in its module cache, so each module to patch is copied next to
 * the build, its overlay is laid over the copy and its edits are made, and the build uses a go.mod
 * that replaces the modules with the copies; returns that go.mod's path.
 */
function patchedModFile(go: string, server: ServerBuild, scratch: string): string {
  const dir = server.dir ?? ROOT;
  const replaces: string[] = [];
  for (const [i, patch] of server.patches!.entries()) {
    const info = JSON.parse(
      execFileSync(go, ['mod', 'download', '-json', patch.module], { cwd: dir, encoding: 'utf8' }),
    );
    if (!info.Dir) throw new Error(`go mod download ${patch.module} gave no directory: ${JSON.stringify(info)}`);
    const copy = join(scratch, `patched-module-${i}`);
    cpSync(info.Dir, copy, { recursive: true });
    // the module cache is read-only, and so is the copy: open it up to patch and later delete it
    chmodSync(copy, 0o755);
    for (const e of readdirSync(copy, { recursive: true, withFileTypes: true })) {
      chmodSync(join(e.parentPath ?? e.path, e.name), e.isDirectory() ? 0o755 : 0o644);
    }
    const overlay = join(dir, patch.overlay);
    for (const name of filesUnder(overlay)) cpSync(join(overlay, name), join(copy, name));
    for (const edit of patch.edits ?? []) {
      const file = join(copy, edit.file);
      const text = readFileSync(file, 'utf8');
      const at = text.indexOf(edit.find);
      if (at < 0 || text.indexOf(edit.find, at + 1) >= 0)
        throw new Error(`patching ${patch.module}: the text to replace is not found exactly once in ${edit.file}`);
      writeFileSync(file, text.slice(0, at) + edit.replace + text.slice(at + edit.find.length));
    }
    replaces.push(`replace ${patch.module} => ${copy}`);
  }
  const modFile = join(scratch, 'go.mod');
  writeFileSync(modFile, `${readFileSync(join(dir, 'go.mod'), 'utf8')}\n${replaces.join('\n')}\n`);
  cpSync(join(dir, 'go.sum'), join(scratch, 'go.sum'));
  return modFile;
}

/**
 * FerretDB's patches (docs/servers.md):
 * - FerretDB itself: our overlay (see the comment at the top), and three edits where it differs
 *   from MongoDB (below): $set's no-change test compares keys, $inc of int32s grows to int64,
 *   $setOnInsert sets null and [].
 * - modernc's libc (the C library SQLite runs on, translated to Go): its memcmp compares a byte at
 *   a time, and SQLite's JSON cache compares whole documents with it on every lookup (7-13% of
 *   FerretDB's CPU). Its generated file is 4 MB, so the function gets a first line that hands the
 *   work to a word-wise compare (_overlay_libc/memcmp_fast.go); linux/amd64 only, the other
 *   platforms keep upstream's loop.
 * - modernc's SQLite driver: it prepared every statement anew, and preparing an UPDATE compiles
 *   each of the table's index expressions; a one-statement UPDATE stays prepared per connection
 *   (_overlay_sqlite/stmt_cache.go).
 */
const FERRETDB_PATCHES: ModulePatch[] = [
  {
    module: 'github.com/FerretDB/FerretDB',
    overlay: '_overlay',
    // types.Identical, which $set asks whether a value changes, compared two documents' values
    // and not their keys: setting {b: 1} over {a: 1} wrote nothing (a renamed fitmentConfig key
    // or a dimensions field moved to another name were silently kept as they were)
    edits: [
      {
        file: 'internal/types/identical.go',
        find: '\t\t\t_, aField, err := aIter.Next()\n',
        replace: '\t\t\taKey, aField, err := aIter.Next() // PATCHED (backoffice): keys count\n',
      },
      {
        file: 'internal/types/identical.go',
        find: '\t\t\t_, bField, err := bIter.Next()\n',
        replace: '\t\t\tbKey, bField, err := bIter.Next()\n',
      },
      {
        file: 'internal/types/identical.go',
        find: '\t\t\tif !Identical(aField, bField) {\n',
        replace: '\t\t\tif aKey != bKey || !Identical(aField, bField) {\n',
      },
      // $inc of two int32s wrapped around past 2^31-1 (2e9 + 5e8 stored as -1794967296); MongoDB
      // stores the sum as an int64, and a stock balance is an $inc of int32s
      {
        file: 'internal/handler/common/params.go',
        find: '\t\tcase int32:\n\t\t\tif v2 == math.MaxInt32 && v1 > 0 {\n',
        replace:
          '\t\tcase int32:\n\t\t\tif sum := int64(v1) + int64(v2); sum > math.MaxInt32 || sum < math.MinInt32 { // PATCHED (backoffice)\n\t\t\t\treturn sum, nil\n\t\t\t}\n\n\t\t\tif v2 == math.MaxInt32 && v1 > 0 {\n',
      },
      // $setOnInsert left out fields set to null or []: MongoDB inserts them, and our records
      // answer those keys (a bulk operation's operationName, rollbackOf, rolledBackBy)
      {
        file: 'internal/handler/common/update.go',
        find: '\tif setOnInsert {\n\t\t// $setOnInsert do not set null and empty array value.\n',
        replace:
          '\tif false && setOnInsert { // PATCHED (backoffice)\n\t\t// $setOnInsert do not set null and empty array value.\n',
      },
    ],
  },
  {
    module: 'modernc.org/libc',
    overlay: '_overlay_libc',
    edits: [
      {
        file: 'ccgo_linux_amd64.go',
        find: 'func Xmemcmp(tls *TLS, vl uintptr, vr uintptr, n Tsize_t) (r1 int32) {\n',
        replace:
          'func Xmemcmp(tls *TLS, vl uintptr, vr uintptr, n Tsize_t) (r1 int32) {\n\treturn memcmpFast(vl, vr, n) // PATCHED (backoffice)\n',
      },
    ],
  },
  {
    module: 'modernc.org/sqlite',
    overlay: '_overlay_sqlite',
    edits: [
      {
        file: 'sqlite.go',
        find: '\tbeginMode       string\n}\n',
        replace:
          '\tbeginMode       string\n\tstmtCache       map[string]uintptr // PATCHED (backoffice): stmt_cache.go\n}\n',
      },
      {
        file: 'sqlite.go',
        find: 'func (s *stmt) exec(ctx context.Context, args []driver.NamedValue) (r driver.Result, err error) {\n',
        replace:
          'func (s *stmt) execUncached(ctx context.Context, args []driver.NamedValue) (r driver.Result, err error) { // PATCHED (backoffice): stmt_cache.go\n',
      },
      {
        file: 'sqlite.go',
        find: '\tdefer c.Unlock()\n\n\tif c.db != 0 {\n\t\tif err := c.closeV2(c.db)',
        replace:
          '\tdefer c.Unlock()\n\n\tc.finalizeCached() // PATCHED (backoffice): stmt_cache.go\n\tif c.db != 0 {\n\t\tif err := c.closeV2(c.db)',
      },
    ],
  },
];

export const SERVERS: Record<ServerBuild['name'], ServerBuild> = {
  // the CLI v1.5.1 (its dev server, Temporal 1.29) built in a module of ours that takes a newer
  // modernc SQLite driver (v1.62.0 for v1.34.1): under load, the older driver left a connection
  // interrupted (SQLITE_INTERRUPT, "interrupted (9)") after a cancelled query, and from then on
  // every call of the server failed (temporalio/temporal#9198 upgraded it for the same errors)
  temporal: {
    name: 'temporal',
    version: 'v1.5.1-sqlite-v1.62.0',
    binary: 'temporal',
    target: 'github.com/temporalio/cli/cmd/temporal',
    dir: TEMPORAL_MODULE,
  },
  ferretdb: {
    name: 'ferretdb',
    version: `v1.24.2-${moduleHash(FERRETDB_MODULE, FERRETDB_PATCHES)}`,
    binary: 'ferretdb',
    target: '.',
    dir: FERRETDB_MODULE,
    patches: FERRETDB_PATCHES,
  },
  minio: {
    name: 'minio',
    version: 'v0.0.0-20260212201848-7aac2a2c5b7c',
    binary: 'minio',
    target: 'github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c',
  },
};

export function toolsDir(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'backoffice', 'tools');
}

export function binaryPath(server: ServerBuild): string {
  return join(toolsDir(), `${server.name}-${server.version}`, server.binary);
}

const GO_CANDIDATES = ['go', '/usr/local/go/bin/go'];

function findGo(candidates: string[]): string | null {
  for (const candidate of candidates) {
    const res = spawnSync(candidate, ['version'], { encoding: 'utf8' });
    if (res.status === 0) return candidate;
  }
  return null;
}

/** Builds the server if its binary is missing; returns the binary's path. */
export function ensureServerBuilt(
  server: ServerBuild,
  log: (line: string) => void = console.log,
  goCandidates = GO_CANDIDATES,
): string {
  const target = binaryPath(server);
  if (existsSync(target)) return target;
  const go = findGo(goCandidates);
  if (!go) {
    const envName = { temporal: 'TEMPORAL_ADDRESS', ferretdb: 'MONGODB_URI', minio: 'S3_ENDPOINT' }[server.name];
    throw new Error(
      `Go is not installed, and it is needed to build the embedded ${server.name} server (${server.target}). ` +
        `Install Go 1.24 or newer, or set ${envName} to use a running ${server.name === 'ferretdb' ? 'MongoDB' : server.name} instead.`,
    );
  }
  // Build into a scratch directory and move the binary in at the end, so an interrupted build
  // never leaves a binary that looks complete.
  const scratch = `${target}.building-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  log(`building ${server.name} ${server.version} (once; cached in ${toolsDir()}) …`);
  const started = Date.now();
  try {
    const modFile = server.patches ? [`-modfile=${patchedModFile(go, server, scratch)}`] : [];
    execFileSync(go, ['install', ...modFile, server.target], {
      cwd: server.dir ?? ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, GOBIN: scratch, GOFLAGS: '-buildvcs=false', CGO_ENABLED: process.env.CGO_ENABLED ?? '1' },
    });
    renameSync(join(scratch, server.binary), target);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  log(`built ${server.name} in ${Math.round((Date.now() - started) / 1000)} s`);
  return target;
}
