// Added (backoffice) to FerretDB v1.24.2's internal/util/fsql at build time
// (scripts/stack/servers.ts, which lays _overlay/ over a copy of the module); called by db.go and
// tx.go for every statement.

package fsql

import (
	"context"
	"log/slog"
)

// logSQL logs a statement and its arguments at debug level.
//
// Upstream calls l.With(fields...).DebugContext(…) whatever the level, and With formats its
// attributes at once for a text handler: every insert or update wrote its whole document as text
// to be thrown away, 9% of FerretDB's CPU during an import.
func logSQL(ctx context.Context, l *slog.Logger, direction, query string, fields []any) {
	if !l.Enabled(ctx, slog.LevelDebug) {
		return
	}

	l.With(fields...).DebugContext(ctx, direction+" "+query)
}
