// Added (backoffice) to FerretDB v1.24.2's internal/backends/sqlite at build time
// (scripts/stack/servers.ts, which lays _overlay/ over a copy of the module); see collection.go for the one call site.

package sqlite

import (
	"fmt"
	"strings"

	"github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// orderTerm is one expression of the ORDER BY clause and its direction ("" or " DESC").
type orderTerm struct {
	expr string
	dir  string
}

// orderTerms is the ORDER BY clause of a sort on top-level fields (the handler sends one only when
// every key is a plain field name, see handler/sort_pushdown.go), term by term: whether a field
// holds a value SQL cannot order (those rows first), then each field's rank and value. Rank and
// value come from the field's type and JSON text, which an index holding the field keeps
// (metadata.TypeColumn, metadata.IndexColumn): on such an index no row is read to order it.
//
// The terms order rows exactly as FerretDB's Go sort orders documents, for the values whose order
// SQL can reproduce: missing or null, numbers (sjson cannot hold NaN or infinities; SQLite compares
// integers with reals exactly), strings (byte order, as Go compares them), ObjectIds (their hex),
// booleans and dates (milliseconds), ranked in BSON's order of types (null < number < string <
// ObjectId < bool < date). A row whose sort field holds anything else (an array, a document, …)
// comes first, before every ordered row: the handler looks at the first document that passes the
// filter and, when it holds such a value, sorts everything in Go as upstream does. So a page
// (sort + limit) decodes about as many documents as it returns instead of every candidate.
func orderTerms(sort *types.Document) []orderTerm {
	ranks := make([]string, 0, sort.Len())
	keys := make([]orderTerm, 0, 2*sort.Len())

	for _, field := range sort.Keys() {
		dir := ""
		if v, ok := must.NotFail(sort.Get(field)).(int64); ok && v < 0 {
			dir = " DESC"
		}

		rank := sortRank(field)
		ranks = append(ranks, rank+" IS NULL")
		keys = append(keys, orderTerm{rank, dir}, orderTerm{sortValue(field), dir})
	}

	return append([]orderTerm{{"(" + strings.Join(ranks, " OR ") + ")", " DESC"}}, keys...)
}

// sortValue is a top-level field's value as SQL, taken from its JSON text (the same value as
// `_ferretdb_sjson->>'$."f"'`, without parsing the document when an index holds the text).
func sortValue(field string) string {
	return fmt.Sprintf(`(%s ->> '$')`, metadata.IndexColumn(field))
}

// sortRank is the BSON type rank of a field's value from the document's sjson schema ($s.p.<field>.t),
// NULL for a type SQL cannot order (see orderTerms).
func sortRank(field string) string {
	typ := fmt.Sprintf(`coalesce(%s, 'null')`, metadata.TypeColumn(field))

	return fmt.Sprintf(`(CASE %s WHEN 'null' THEN 2 WHEN 'int' THEN 3 WHEN 'long' THEN 3 WHEN 'double' THEN 3 `+
		`WHEN 'string' THEN 4 WHEN 'objectId' THEN 8 WHEN 'bool' THEN 9 WHEN 'date' THEN 10 END)`, typ)
}

// quotePath is a JSON path for SQLite as an SQL string literal: root, then field quoted, then rest.
// Field names here are metadata.PlainField, so they need no escaping.
func quotePath(root, field string, rest ...string) string {
	path := root + `."` + field + `"`
	for _, r := range rest {
		path += "." + r
	}

	return "'" + path + "'"
}

// sortedQuery reads the rows of a filter in the order of a sort on fields. Where the filter runs
// as parts, SELECTs of their own (prepareWhereClause), each part computes its rows' sort keys on
// the index it runs on; the rows are then read by rowid and ordered by those keys. Ordered by keys
// computed on the rows instead (rowid IN (…) ORDER BY …), a search page parsed every match, 5,000
// of a tenant's 50,000 products, to order them. No LIMIT: the handler stops reading after its page,
// and the superset may hold rows its filter drops. ok is false when the sort is not on fields.
func sortedQuery(table string, filter, sort *types.Document) (string, []any, bool) {
	if sort.Len() == 0 || sort.Has("$natural") {
		return "", nil, false
	}

	parts := whereParts(filter, true)
	if len(parts) == 0 {
		parts = []*condition{{sql: "TRUE"}}
	}

	terms := orderTerms(sort)
	columns := make([]string, len(terms))
	order := make([]string, len(terms))

	for i, t := range terms {
		columns[i] = fmt.Sprintf(`%s AS k%d`, t.expr, i)
		order[i] = fmt.Sprintf(`s.k%d%s`, i, t.dir)
	}

	// The keys and rowids are sorted on their own, and the rows are read afterwards in that order:
	// ordered with its rows, the sort carried each 5 KB document through SQLite's sorter, which
	// spilled a filtered page's 600 candidates to a temporary file (18 ms where this takes 9, and
	// 3 ms for the 50 rows a page reads), and a whole catalog's export hundreds of MB. Read in
	// order, the rows stream: the first comes before the last is decoded.
	//
	// CROSS JOIN keeps the sorted subquery the outer loop, so the rows come in its order; its
	// LIMIT -1 (no limit) keeps SQLite from dropping the subquery's ORDER BY, which it does for a
	// subquery in a join that has no LIMIT (select.c, "Omit ORDER BY from subquery"). An outer
	// ORDER BY would sort the documents again: SQLite 3.46 does not know the subquery orders them.
	union, args := unionOf(parts, fmt.Sprintf(`SELECT rowid AS r, %s FROM %q`, strings.Join(columns, ", "), table), nil)
	q := fmt.Sprintf(
		`SELECT t.%s FROM (SELECT s.r FROM (%s) AS s ORDER BY %s LIMIT -1) AS o CROSS JOIN %q AS t ON t.rowid = o.r`,
		metadata.DefaultColumn, union, strings.Join(order, ", "), table,
	)

	return q, args, true
}
