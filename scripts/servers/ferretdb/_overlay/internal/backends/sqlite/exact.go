// Added (backoffice) to FerretDB v1.24.2's internal/backends/sqlite at build time
// (scripts/stack/servers.ts, which lays _overlay/ over a copy of the module); used by count.go.

package sqlite

import (
	"fmt"
	"strings"

	"github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"
	"github.com/FerretDB/FerretDB/internal/handler/sjson"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// exactCondition is the opposite of prepareWhereClause's superset: a SQL condition E that only
// matching documents meet (E true ⇒ the document matches the filter; it may miss some matches,
// never include a non-match). A count is then the rows of the superset S where E is true plus the
// rows of S where it is not that FerretDB decodes and finds matching (count.go), exact however
// incomplete E is. nil when some part of the filter has no such form: the count goes the usual way.
//
// E is built for {f: s}, {f: {$eq: s}}, {f: {$in: [s…]}} (the field's value is one of the strings),
// {f: /lit/}, {f: /lit/i} and {f: {$regex, $options}} (its value contains the literal, by instr or,
// for i, by LIKE, which folds ASCII letters only: a subset of what Go's (?i) folds), for a
// top-level field f; and $and, $or and a document's keys of those. Each term requires the
// field's type in the document's sjson schema ($s.p.f.t) to be "string" and compares the field's
// value as SQL text (`->>`, JSON escapes undone), not its JSON text:
//
//   - four BSON types are JSON strings in sjson: string, ObjectId (its hex), binData (base64) and
//     regex (its pattern); an ObjectId, a binary or a stored regex whose text is "s" or holds lit
//     neither equals s nor matches /lit/ as a string does (see regexCondition for a stored regex);
//   - an escape in the JSON text of a string can hold what the string does not: "tab\there" holds
//     "there". Our search text joins its parts with newlines, so nearly every value has one.
//
// The type test makes the term exact for every value, a 24-hex string and a hex-only literal
// included. A non-unique index holds the type of each of its fields (metadata.TypeColumn), and
// exactEquality and exactRegex test a JSON text an index holds where they can prove it is the
// value's: an exact count then reads no row.
func exactCondition(filter *types.Document) *condition {
	return exactDocument(filter, 0)
}

// always is E for an empty filter: every document matches.
const always = "1"

func exactDocument(doc *types.Document, depth int) *condition {
	if depth > maxDepth {
		return nil
	}

	var parts []*condition

	for _, key := range doc.Keys() {
		value := must.NotFail(doc.Get(key))

		var c *condition

		switch {
		case key == "$and", key == "$or":
			docs := documentsOf(value)
			if len(docs) == 0 {
				return nil // not an array of documents, or empty: FerretDB refuses it
			}

			branches := make([]*condition, len(docs))
			for i, d := range docs {
				if branches[i] = exactDocument(d, depth+1); branches[i] == nil {
					return nil
				}
			}

			op := " AND "
			if key == "$or" {
				op = " OR "
			}

			c = join(branches, op)
		case strings.HasPrefix(key, "$"), !plainPath(key):
			return nil
		default:
			if c = exactField(key, value); c == nil {
				return nil
			}
		}

		parts = append(parts, c)
	}

	if len(parts) == 0 {
		return &condition{sql: always}
	}

	return join(parts, " AND ")
}

// exactField is E for {f: value}.
func exactField(f string, value any) *condition {
	switch v := value.(type) {
	case string:
		return exactEquality(f, []any{v})
	case types.Regex:
		return exactRegex(f, v)
	case *types.Document:
		return exactOperators(f, v)
	default:
		return nil
	}
}

// exactOperators is E for {f: {$eq, $in, $regex, $options}}: every operator must hold.
func exactOperators(f string, ops *types.Document) *condition {
	if ops.Len() == 0 {
		return nil // {f: {}} is an equality with an empty document
	}

	var parts []*condition

	for _, op := range ops.Keys() {
		value := must.NotFail(ops.Get(op))

		var c *condition

		switch op {
		case "$eq":
			s, ok := value.(string)
			if !ok {
				return nil
			}

			c = exactEquality(f, []any{s})
		case "$in":
			arr, ok := value.(*types.Array)
			if !ok || arr.Len() == 0 {
				return nil
			}

			values := make([]any, arr.Len())
			for i := range values {
				if values[i], ok = must.NotFail(arr.Get(i)).(string); !ok {
					return nil
				}
			}

			c = exactEquality(f, values)
		case "$regex":
			re, ok := regexOperand(ops)
			if !ok {
				return nil
			}

			c = exactRegex(f, re)
		case "$options":
			if !ops.Has("$regex") {
				return nil
			}

			continue // part of $regex
		default:
			return nil // another operator, or an embedded document compared whole
		}

		if c == nil {
			return nil
		}

		parts = append(parts, c)
	}

	return join(parts, " AND ")
}

// exactEquality: the field is a string, one of values. A string that JSON writes as it is, between
// quotes, is compared as that JSON text, which an index on the field holds (metadata.IndexColumn);
// any other as the field's value, read from the row.
func exactEquality(f string, values []any) *condition {
	in := "?" + strings.Repeat(", ?", len(values)-1)

	texts := make([]any, len(values))

	for i, v := range values {
		if !jsonVerbatim(v.(string)) {
			return stringField(f, &condition{sql: fmt.Sprintf(`%s IN (%s)`, fieldValue(f), in), args: values})
		}

		texts[i] = string(must.NotFail(sjson.MarshalSingleValue(v)))
	}

	return stringField(f, &condition{sql: fmt.Sprintf(`%s IN (%s)`, metadata.IndexColumn(f), in), args: texts})
}

// exactRegex: the field is a string that contains the literal (for i: in ASCII case, which Go's
// (?i) also folds).
//
// First on the field's JSON text as an index holds it, with its newline escapes undone: when no
// backslash is left, the text had no other escape (a "\\" keeps one), so it is the string
// between quotes, and a literal that JSON writes as it is (no quote) is in one exactly when it is
// in the other. Our search text joins its parts with newlines, so this reads no row for nearly
// every product. Otherwise on the field's value, read from the row.
func exactRegex(f string, re types.Regex) *condition {
	if re.Options != "" && re.Options != "i" {
		return nil
	}

	literal, ok := regexLiteral(re.Pattern)
	if !ok || literal == "" {
		return nil
	}

	if re.Options == "i" && !isASCII(literal) {
		return nil
	}

	contains := func(text string) *condition {
		if re.Options == "" {
			return &condition{sql: fmt.Sprintf(`instr(%s, ?) > 0`, text), args: []any{literal}}
		}

		return &condition{sql: fmt.Sprintf(`%s LIKE ? ESCAPE '\'`, text), args: []any{likeContains(literal)}}
	}

	byValue := contains(fieldValue(f))
	if !jsonVerbatim(literal) {
		return stringField(f, byValue)
	}

	text := fmt.Sprintf(`replace(%s, '\n', char(10))`, metadata.IndexColumn(f))
	byText := join([]*condition{{sql: fmt.Sprintf(`instr(%s, '\') = 0`, text)}, contains(text)}, " AND ")

	return stringField(f, join([]*condition{byText, byValue}, " OR "))
}

// fieldValue is a top-level field's value as SQL: for a string, its text.
func fieldValue(f string) string {
	return fmt.Sprintf(`%s->>%s`, metadata.DefaultColumn, quotePath("$", f))
}

// stringField adds to c that the top-level field f is a string in the document's sjson schema.
func stringField(f string, c *condition) *condition {
	typ := &condition{sql: metadata.TypeColumn(f) + ` = 'string'`}
	return join([]*condition{c, typ}, " AND ")
}
