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

// KindColumn is a top-level field's kind, its BSON type with the three numeric types as one:
// 'number' for int, long and double, else TypeColumn's value, 'null' when the field is missing.
// The sort rank of a field (sqlite/order.go) is read from it, so an index that holds either
// column (SQLite reads TypeColumn inside it from an index too) orders rows without parsing them.
func KindColumn(field string) string {
	typ := fmt.Sprintf(`coalesce(%s, 'null')`, TypeColumn(field))

	return fmt.Sprintf(`(CASE %s WHEN 'int' THEN 'number' WHEN 'long' THEN 'number' WHEN 'double' THEN 'number' ELSE %s END)`,
		typ, typ)
}

// PlainField: field is a top-level field whose name needs no quoting in a JSON path.
func PlainField(field string) bool {
	return plainField.MatchString(field)
}

// createIndexSQL is the statement that makes index in collection c.
//
// A non-unique index also holds, after its keys, each top-level key's type (TypeColumn). An exact
// count (count.go) proves a row matches by the field's text and its type; with both in the index
// it reads no row: 25 ms instead of 210 ms for a word in 5,000 of 50,000 products, where the type
// read from the row costs a parse of the whole 5 KB document.
//
// A unique index holds each top-level key's kind (KindColumn) instead, for sorts: ordered by a
// field that only a unique index holds (an export by SKU), 50,000 products took 1.9 s to parse
// for their types, and 0.1 s read from the index. Uniqueness becomes that of the key's text and
// kind: values of one text but different kinds (a string and an ObjectId of the same hex, a
// number and a date of the same milliseconds) are distinct, as MongoDB holds them, and numbers of
// any type stay one kind (1 and 1.0 collide, as in MongoDB). Made again from rows that were
// unique on text alone, such an index cannot fail (respellIndexes).
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

	for _, key := range index.Key {
		switch {
		case !PlainField(key.Field):
		case index.Unique:
			columns = append(columns, KindColumn(key.Field))
		default:
			columns = append(columns, TypeColumn(key.Field))
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
