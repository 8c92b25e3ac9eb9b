// PATCHED (backoffice): added to modernc.org/sqlite; see scripts/stack/servers.ts.

package sqlite

import (
	"context"
	"database/sql/driver"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// maxCachedStmts bounds the statements a connection keeps: FerretDB's UPDATE has one text per
// table, so this holds every collection of a busy database and stops there.
const maxCachedStmts = 256

// exec runs a statement, keeping a one-statement UPDATE prepared on its connection for the next
// call. Upstream prepares and finalizes the SQL on every call; for FerretDB's
// `UPDATE <table> SET _ferretdb_sjson = ? WHERE <id> = ?`, on a table with a dozen expression
// indexes, the prepare (which compiles every index expression) cost about as much as the update.
// A kept statement is reset and its bindings cleared after each run; SQLite prepares it again by
// itself when the schema changes (sqlite3_prepare_v2), and Close finalizes it. Anything else
// (several statements, other kinds, a full cache) takes upstream's path.
func (s *stmt) exec(ctx context.Context, args []driver.NamedValue) (r driver.Result, err error) {
	// the kind is read in place: the SQL is copied into a Go string (the cache's key) only for an UPDATE
	if !hasPrefix(s.psql, "UPDATE ") {
		return s.execUncached(ctx, args)
	}
	q := libc.GoString(s.psql)

	c := s.c
	pstmt, ok := c.stmtCache[q]
	if !ok {
		if len(c.stmtCache) >= maxCachedStmts {
			return s.execUncached(ctx, args)
		}

		psql := s.psql
		p, err := c.prepareV2(&psql)
		if err != nil {
			return nil, err
		}

		if p == 0 || *(*byte)(unsafe.Pointer(psql)) != 0 { // empty, or more than one statement
			if p != 0 {
				_ = c.finalize(p)
			}
			return s.execUncached(ctx, args)
		}

		if c.stmtCache == nil {
			c.stmtCache = make(map[string]uintptr)
		}
		c.stmtCache[q] = p
		pstmt = p
	}

	var done int32
	if ctx != nil {
		if ctxDone := ctx.Done(); ctxDone != nil {
			select {
			case <-ctxDone:
				return nil, ctx.Err()
			default:
			}
			defer interruptOnDone(ctx, c, &done)()
		}
	}

	r, err = func() (r driver.Result, err error) {
		n, err := c.bindParameterCount(pstmt)
		if err != nil {
			return nil, err
		}

		if n != 0 {
			allocs, err := c.bind(pstmt, n, args)
			if err != nil {
				return nil, err
			}

			defer func() {
				for _, v := range allocs {
					c.free(v)
				}
			}()
		}

		rc, err := c.step(pstmt)
		if err != nil {
			return nil, err
		}

		switch rc & 0xff {
		case sqlite3.SQLITE_DONE, sqlite3.SQLITE_ROW:
			return newResult(c)
		default:
			return nil, c.errstr(int32(rc))
		}
	}()

	// ready for the next run, holding no lock and no pointer to freed arguments
	sqlite3.Xsqlite3_reset(c.tls, pstmt)
	sqlite3.Xsqlite3_clear_bindings(c.tls, pstmt)

	if ctx != nil && atomic.LoadInt32(&done) != 0 {
		return nil, ctx.Err()
	}

	return r, err
}

// hasPrefix tells whether the C string at p starts with prefix (it stops at the string's NUL).
func hasPrefix(p uintptr, prefix string) bool {
	for i := 0; i < len(prefix); i++ {
		if *(*byte)(unsafe.Pointer(p + uintptr(i))) != prefix[i] {
			return false
		}
	}
	return true
}

// finalizeCached finalizes the statements exec kept, before the connection closes.
func (c *conn) finalizeCached() {
	for q, pstmt := range c.stmtCache {
		_ = c.finalize(pstmt)
		delete(c.stmtCache, q)
	}
}
