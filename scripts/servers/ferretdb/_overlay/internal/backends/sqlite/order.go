// Added (backoffice) to FerretDB v1.24.2's internal/backends/sqlite at build time
// (scripts/stack/servers.ts, which lays _overlay/ over a copy of the module); see collection.go for the one call site.

package sqlite

import (
	"fmt"
	"strings"

	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// orderByClause is upstream's clause for {$natural: ±1}. For a sort on top-level fields (the
// handler sends one only when every key is a plain field name, see handler/sort_pushdown.go) it
// orders rows exactly as FerretDB's Go sort orders documents, for the values whose order SQL can
// reproduce: missing or null, numbers (sjson cannot hold NaN or infinities; SQLite compares
// integers with reals exactly), strings (byte order, as Go compares them), ObjectIds (their hex),
// booleans and dates (milliseconds), ranked in BSON's order of types (null < number < string <
// ObjectId < bool < date). A row whose sort field holds anything else (an array, a document, …)
// comes first, before every ordered row: the handler looks at the first document that passes the
// filter and, when it holds such a value, sorts everything in Go as upstream does. So a page
// (sort + limit) decodes about as many documents as it returns instead of every candidate.
func orderByClause(sort *types.Document) string {
	if sort.Len() == 0 || sort.Has("$natural") {
		return prepareOrderByClause(sort)
	}

	ranks := make([]string, 0, sort.Len())
	keys := make([]string, 0, 2*sort.Len())

	for _, field := range sort.Keys() {
		dir := ""
		if v, ok := must.NotFail(sort.Get(field)).(int64); ok && v < 0 {
			dir = " DESC"
		}

		rank := sortRank(field)
		ranks = append(ranks, rank+" IS NULL")
		keys = append(keys, rank+dir, fieldValue(field)+dir)
	}

	return ` ORDER BY (` + strings.Join(ranks, " OR ") + `) DESC, ` + strings.Join(keys, ", ")
}

// sortRank is the BSON type rank of a field's value from the document's sjson schema ($s.p.<field>.t),
// NULL for a type SQL cannot order (see orderByClause).
func sortRank(field string) string {
	typ := fmt.Sprintf(`coalesce(%s, 'null')`, fieldType(field))

	return fmt.Sprintf(`(CASE %s WHEN 'null' THEN 2 WHEN 'int' THEN 3 WHEN 'long' THEN 3 WHEN 'double' THEN 3 `+
		`WHEN 'string' THEN 4 WHEN 'objectId' THEN 8 WHEN 'bool' THEN 9 WHEN 'date' THEN 10 END)`, typ)
}

// quotePath is a JSON path for SQLite as an SQL string literal: root, then field quoted, then rest.
// Field names here match plainField, so they need no escaping.
func quotePath(root, field string, rest ...string) string {
	path := root + `."` + field + `"`
	for _, r := range rest {
		path += "." + r
	}

	return "'" + path + "'"
}
