// Added (backoffice) to FerretDB v1.24.2's internal/backends/sqlite at build time
// (scripts/stack/servers.ts, which lays _overlay/ over a copy of the module); see collection.go for the one call site.

package sqlite

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"
	"github.com/FerretDB/FerretDB/internal/handler/sjson"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// prepareWhereClause turns a query filter into a SQL WHERE clause that every matching document
// satisfies: a superset, never exact. Upstream pushes down only a filter of exactly {_id} and
// decodes every other document of the collection to test it in Go, about 0.4 ms per 5 KB
// product: 20 s of CPU for one list or count over 50,000 products. Every caller of Query (find,
// count, distinct, update, delete, findAndModify, aggregate's $match) still runs the whole filter
// on what comes back, so a condition left out here costs time, never a wrong answer. What is
// pushed down:
//
//   - {f: v} and {f: {$eq: v}, {f: {$in: [v…]}} for a top-level field and a string or ObjectId
//     v: `_ferretdb_sjson->"f" IN (…)`, spelled as FerretDB spells its index columns, so the
//     indexes the application declared serve it. A field can also match by holding an array
//     that contains v, so arrays pass too (`->"f"` of an array is text starting with '[');
//   - {f: /literal/} and {f: /literal/i} for any path: the document's JSON text contains the
//     literal (LIKE for i, instr otherwise). That still reads every row, but SQLite does it
//     fifty times faster than FerretDB decodes documents;
//   - $and of those (AND), $or (OR, only when every branch gives a condition).
//
// Values are compared as the JSON text sjson writes, so only values whose JSON form is certain
// are used: strings without characters Go's encoder escapes (quote, backslash, controls, <, >,
// &, U+2028, U+2029), valid UTF-8.
func prepareWhereClause(filter *types.Document) (string, []any) {
	if filter == nil || filter.Len() == 0 {
		return "", nil
	}

	// upstream's own case, unchanged: exactly {_id: string or ObjectId}
	if filter.Len() == 1 {
		v, _ := filter.Get("_id")
		switch v.(type) {
		case string, types.ObjectID:
			return fmt.Sprintf(` WHERE %s = ?`, metadata.IDColumn), []any{string(must.NotFail(sjson.MarshalSingleValue(v)))}
		}
	}

	if c := documentCondition(filter, 0); c != nil {
		return ` WHERE ` + c.sql, c.args
	}

	return "", nil
}

type condition struct {
	sql  string
	args []any
}

// maxDepth bounds the recursion through $and / $or.
const maxDepth = 8

var plainField = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// documentCondition ANDs the conditions of a filter document's keys; nil when none applies.
func documentCondition(doc *types.Document, depth int) *condition {
	if depth > maxDepth {
		return nil
	}

	var parts []*condition

	for _, key := range doc.Keys() {
		value := must.NotFail(doc.Get(key))

		var c *condition

		switch key {
		case "$and":
			c = listCondition(value, " AND ", depth)
		case "$or":
			c = listCondition(value, " OR ", depth)
		default:
			if !strings.HasPrefix(key, "$") {
				c = fieldCondition(key, value)
			}
		}

		if c != nil {
			parts = append(parts, c)
		}
	}

	return join(parts, " AND ")
}

// listCondition joins the conditions of $and's or $or's documents. For OR, a branch without a
// condition matches anything, and so does the whole $or.
func listCondition(value any, op string, depth int) *condition {
	arr, ok := value.(*types.Array)
	if !ok || arr.Len() == 0 {
		return nil
	}

	var parts []*condition

	for i := 0; i < arr.Len(); i++ {
		doc, ok := must.NotFail(arr.Get(i)).(*types.Document)
		if !ok {
			return nil
		}

		c := documentCondition(doc, depth+1)
		if c == nil {
			if op == " OR " {
				return nil
			}

			continue
		}

		parts = append(parts, c)
	}

	return join(parts, op)
}

func join(parts []*condition, op string) *condition {
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return parts[0]
	}

	sqls := make([]string, len(parts))

	var args []any

	for i, p := range parts {
		sqls[i] = "(" + p.sql + ")"
		args = append(args, p.args...)
	}

	return &condition{sql: strings.Join(sqls, op), args: args}
}

// fieldCondition is the condition for one field of a filter document, or nil.
func fieldCondition(path string, value any) *condition {
	switch v := value.(type) {
	case types.Regex:
		return regexCondition(v)
	case *types.Document:
		return operatorCondition(path, v)
	default:
		return equalityCondition(path, []any{v})
	}
}

// operatorCondition handles {f: {$eq: v}}, {f: {$in: […]}} and {f: {$regex: …}}; other
// operators add nothing (the document still has to pass them in Go).
func operatorCondition(path string, ops *types.Document) *condition {
	var parts []*condition

	for _, op := range ops.Keys() {
		value := must.NotFail(ops.Get(op))

		var c *condition

		switch op {
		case "$eq":
			c = equalityCondition(path, []any{value})
		case "$in":
			if arr, ok := value.(*types.Array); ok && arr.Len() > 0 {
				values := make([]any, arr.Len())
				for i := range values {
					values[i] = must.NotFail(arr.Get(i))
				}

				c = equalityCondition(path, values)
			}
		case "$regex":
			if re, ok := value.(types.Regex); ok && !ops.Has("$options") {
				c = regexCondition(re)
			}
		default:
			if !strings.HasPrefix(op, "$") {
				return nil // an embedded document compared whole
			}
		}

		if c != nil {
			parts = append(parts, c)
		}
	}

	return join(parts, " AND ")
}

// equalityCondition: the field is one of values, or an array (which may contain one of them).
func equalityCondition(path string, values []any) *condition {
	if !plainField.MatchString(path) || strings.HasPrefix(path, "_ferretdb_") {
		return nil
	}

	args := make([]any, len(values))

	for i, v := range values {
		switch v := v.(type) {
		case string:
			if !jsonVerbatim(v) {
				return nil
			}
		case types.ObjectID:
		default:
			return nil
		}

		args[i] = string(must.NotFail(sjson.MarshalSingleValue(v)))
	}

	in := "?" + strings.Repeat(", ?", len(values)-1)

	if path == "_id" {
		// _id is never an array; metadata.IDColumn is what the _id lookup index covers
		return &condition{sql: fmt.Sprintf(`%s IN (%s)`, metadata.IDColumn, in), args: args}
	}

	column := fmt.Sprintf(`%s->%q`, metadata.DefaultColumn, path)

	// '[' … '\' holds every text that starts with '[': the JSON text of any array
	return &condition{
		sql:  fmt.Sprintf(`%[1]s IN (%[2]s) OR (%[1]s >= '[' AND %[1]s < '\')`, column, in),
		args: args,
	}
}

// regexCondition: the document's JSON text contains the regular expression's literal text.
// Only a literal pattern (metacharacters escaped) with no option but i qualifies.
func regexCondition(re types.Regex) *condition {
	if re.Options != "" && re.Options != "i" {
		return nil
	}

	literal, ok := regexLiteral(re.Pattern)
	if !ok || literal == "" || !jsonVerbatim(literal) {
		return nil
	}

	if re.Options == "" {
		return &condition{sql: fmt.Sprintf(`instr(%s, ?) > 0`, metadata.DefaultColumn), args: []any{literal}}
	}

	// SQLite's LIKE folds ASCII letters only, so the literal must be ASCII; Go's (?i) also folds
	// k to U+212A (Kelvin sign) and s to U+017F (long s), which LIKE cannot see: documents holding
	// either character pass as well.
	for i := 0; i < len(literal); i++ {
		if literal[i] >= utf8.RuneSelf {
			return nil
		}
	}

	escaped := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(literal)
	sql := fmt.Sprintf(`%s LIKE ? ESCAPE '\'`, metadata.DefaultColumn)
	args := []any{"%" + escaped + "%"}

	lower := strings.ToLower(literal)
	if strings.ContainsRune(lower, 'k') {
		sql += fmt.Sprintf(` OR instr(%s, ?) > 0`, metadata.DefaultColumn)
		args = append(args, "\u212a")
	}

	if strings.ContainsRune(lower, 's') {
		sql += fmt.Sprintf(` OR instr(%s, ?) > 0`, metadata.DefaultColumn)
		args = append(args, "\u017f")
	}

	return &condition{sql: sql, args: args}
}

// regexLiteral returns the text a pattern matches when it is a plain literal: characters other
// than metacharacters, and metacharacters escaped with a backslash.
func regexLiteral(pattern string) (string, bool) {
	const meta = `\.+*?()|[]{}^$/-#&~ `

	var b strings.Builder

	for i := 0; i < len(pattern); i++ {
		ch := pattern[i]

		if ch == '\\' {
			if i+1 >= len(pattern) || !strings.ContainsRune(meta, rune(pattern[i+1])) {
				return "", false // \d, \w, \b, \1 …: not a literal
			}

			i++
			b.WriteByte(pattern[i])

			continue
		}

		if strings.IndexByte(`.+*?()|[]{}^$`, ch) >= 0 {
			return "", false
		}

		b.WriteByte(ch)
	}

	return b.String(), true
}

// jsonVerbatim reports whether Go's JSON encoder writes s as is between quotes, so that s
// appears in a stored document's JSON text exactly.
func jsonVerbatim(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}

	for _, r := range s {
		if r < 0x20 || r == '"' || r == '\\' || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029' {
			return false
		}
	}

	return true
}
