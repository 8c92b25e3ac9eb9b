// Added (backoffice) to FerretDB v1.24.2's internal/backends/sqlite/metadata at build time
// (scripts/stack/servers.ts, which lays _overlay/ over a copy of the module); used by registry.go
// and by the SQL the sqlite package builds (prefilter.go, exact.go).

package metadata

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/FerretDB/FerretDB/internal/util/fsql"
	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
)

// IndexColumn is a field's JSON text as index columns spell it: the text of `_ferretdb_sjson->"a"->"b"`
// concatenated with the empty string.
//
// Upstream indexes `_ferretdb_sjson->"a"`. Since 3.45, SQLite never reads the value of such an
// expression from an index, because `->` may give its result a subtype (where.c,
// _whereAddIndexedExpr): a condition on an indexed field could seek the index but had to load and
// parse each row to test anything else about the field. A count of the products whose search text
// contains a word read all 50,000 rows of a tenant (0.65 s); from the index it reads none but the
// matches. The concatenation drops the subtype and nothing else: the same text, NULL for a missing field, the
// same order and the same uniqueness, so every index keeps its meaning.
//
// SQLite matches an index expression by its form, so every condition meant for an index spells
// its column with this function.
func IndexColumn(field string) string {
	fields := strings.Split(field, ".")
	for j, f := range fields {
		fields[j] = fmt.Sprintf("%q", f)
	}

	return fmt.Sprintf("(%s->%s || '')", DefaultColumn, strings.Join(fields, "->"))
}

// TypeColumn is a top-level field's BSON type as the document's sjson schema records it
// ($s.p.<field>.t: "string", "objectId", …), NULL when the field is missing.
func TypeColumn(field string) string {
	return fmt.Sprintf(`%s->>'$."$s".p."%s".t'`, DefaultColumn, field)
}

// plainField: a top-level field whose name needs no quoting in a JSON path.
var plainField = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// PlainField: field is a top-level field whose name needs no quoting in a JSON path.
func PlainField(field string) bool {
	return plainField.MatchString(field)
}

// createIndexSQL is the statement that makes index in collection c.
//
// A non-unique index also holds, after its keys, each top-level key's type (TypeColumn). An exact
// count (count.go) proves a row matches by the field's text and its type; with both in the index
// it reads no row: 25 ms instead of 210 ms for a word in 5,000 of 50,000 products, where the type
// read from the row costs a parse of the whole 5 KB document. Unique indexes keep their keys
// alone, so uniqueness is what it was.
func createIndexSQL(c *Collection, index IndexInfo) string {
	q := "CREATE "

	if index.Unique {
		q += "UNIQUE "
	}

	columns := make([]string, 0, 2*len(index.Key))
	for _, key := range index.Key {
		column := IndexColumn(key.Field)
		if key.Descending {
			column += " DESC"
		}

		columns = append(columns, column)
	}

	if !index.Unique {
		for _, key := range index.Key {
			if PlainField(key.Field) {
				columns = append(columns, TypeColumn(key.Field))
			}
		}
	}

	return q + fmt.Sprintf("INDEX %q ON %q (%s)", c.TableName+"_"+index.Name, c.TableName, strings.Join(columns, ", "))
}

// respellIndexes makes again, each in a transaction of its own, every index of the database whose
// statement is not the one createIndexSQL writes today: a data directory made by an earlier build
// (upstream's spelling) gets indexes that its queries can use. Once done, a start reads one row of
// sqlite_master per index. Made again from the same rows, a unique index cannot fail.
func (r *Registry) respellIndexes(ctx context.Context, db *fsql.DB, colls map[string]*Collection) error {
	for _, c := range colls {
		for _, index := range c.Settings.Indexes {
			name := c.TableName + "_" + index.Name
			want := createIndexSQL(c, index)

			var have string

			err := db.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`, name).Scan(&have)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return lazyerrors.Error(err)
			}

			if have == want {
				continue
			}

			r.l.InfoContext(ctx, "Making an index again in today's spelling", "index", name)

			err = db.InTransaction(ctx, func(tx *fsql.Tx) error {
				if _, err := tx.ExecContext(ctx, fmt.Sprintf("DROP INDEX IF EXISTS %q", name)); err != nil {
					return lazyerrors.Error(err)
				}

				if _, err := tx.ExecContext(ctx, want); err != nil {
					return lazyerrors.Error(err)
				}

				return nil
			})
			if err != nil {
				return lazyerrors.Error(err)
			}
		}
	}

	return nil
}
