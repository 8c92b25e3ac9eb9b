package main

import (
	"database/sql"
	"fmt"
	"time"
)

// tableStats keeps SQLite's planner statistics (ANALYZE) in step with the tables' sizes.
//
// Our FerretDB build pushes filters down into SQL (_overlay/sqlite/prefilter.go), and a filter
// usually names the tenant plus one or two fields that several of the collection's indexes begin
// with. Without statistics SQLite assumes an equality on an index's first column picks about ten
// rows, so for `tenantId = ? AND (brand IN (…) OR <brand is an array>)` it walks the first
// index on tenantId it finds, every product of the tenant, instead of the tenantId+brand index
// (0.6 s against 15 ms at 50,000 products in one tenant). ANALYZE tells it how many rows a
// tenant really holds; other connections use new statistics from their next statement on.
type tableStats struct {
	last time.Time
	rows map[string]int64 // "<file>|<table>" → rows at its last ANALYZE
}

// statsInterval: how often, at most, table sizes are checked (only after writes).
const statsInterval = 10 * time.Second

// minRowsForStats: below this a table is read whole in no time, whatever the plan.
const minRowsForStats = 500

// refresh runs ANALYZE on each table of file whose row count has doubled or halved since its
// last ANALYZE (a count is an index walk: 15 ms for 50,000 products; ANALYZE of that table
// with its nine indexes 0.1 s). Called with the front door's write lock held.
func (s *tableStats) refresh(db *sql.DB, file string) error {
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%_ferretdb_sjson%'`)
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, name)
	}
	rows.Close()

	for _, t := range tables {
		var n int64
		if err := db.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %q`, t)).Scan(&n); err != nil {
			continue // dropped meanwhile
		}
		key := file + "|" + t
		prev := s.rows[key]
		if n < minRowsForStats && prev < minRowsForStats {
			continue
		}
		if prev > 0 && n < 2*prev && 2*n > prev {
			continue
		}
		if _, err := db.Exec(fmt.Sprintf(`ANALYZE %q`, t)); err != nil {
			return err
		}
		s.rows[key] = n
	}
	return nil
}
