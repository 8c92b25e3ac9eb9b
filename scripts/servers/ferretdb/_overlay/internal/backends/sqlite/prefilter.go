// Added (backoffice) to FerretDB v1.24.2's internal/backends/sqlite at build time
// (scripts/stack/servers.ts, which lays _overlay/ over a copy of the module); see collection.go for the one call site.

package sqlite

import (
	"encoding/json"
	"fmt"
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
//     v: the field's JSON text IN (…), spelled as index columns are
//     (metadata.IndexColumn), so the indexes the application declared serve it. A field can also
//     match by holding an array that contains v, so arrays pass too (`->"f"` of an array is text
//     starting with '['), in branches of their own so that an index serves several fields at
//     once (see render);
//   - {f: /literal/}, {f: /literal/i} and the same as {f: {$regex: …, $options: …}}: for a
//     top-level field, the field's JSON text (spelled as the index columns are) is present and
//     contains the literal (LIKE for i, instr otherwise), so that a description mentioning the
//     word is no candidate, and SQLite tests it on the entries of an index that holds the field
//     (tenantId+search) before it reads a row; for a dotted path, the document's JSON text
//     contains it, about thirty times faster than FerretDB decodes the rows;
//   - $and of those (AND), $or (OR, only when every branch gives a condition).
//
// Values are compared as the JSON text sjson writes, so only values whose JSON form is certain
// are used: strings without characters Go's encoder escapes (quote, backslash, controls, <, >,
// &, U+2028, U+2029), valid UTF-8.
func prepareWhereClause(filter *types.Document, table string) (string, []any) {
	parts := whereParts(filter, false)

	switch len(parts) {
	case 0:
		return "", nil
	case 1:
		return ` WHERE ` + parts[0].sql, parts[0].args
	}

	// the rows of each branch, found on its own index (see render)
	union, args := unionOf(parts, fmt.Sprintf(`SELECT rowid FROM %q`, table), nil)

	return ` WHERE rowid IN (` + union + `)`, args
}

// unionOf is `head WHERE part` for each part, joined by UNION ALL (parts hold no row twice), and
// its arguments: headArgs, then the part's, for each.
func unionOf(parts []*condition, head string, headArgs []any) (string, []any) {
	selects := make([]string, len(parts))

	var args []any

	for i, p := range parts {
		selects[i] = head + ` WHERE ` + p.sql
		args = append(append(args, headArgs...), p.args...)
	}

	return strings.Join(selects, ` UNION ALL `), args
}

// whereParts is prepareWhereClause's condition as parts that no row meets two of, whose OR it is:
// the branches of render when each is to run on an index of its own (always, or only when a term
// is to be tested on index entries, see render), else the one condition; none when nothing is
// pushed down. A count and a sorted read compute on index entries too (their exact condition,
// their sort keys), so they take the branches always.
func whereParts(filter *types.Document, always bool) []*condition {
	if filter == nil || filter.Len() == 0 {
		return nil
	}

	// upstream's own case: exactly {_id: string or ObjectId}
	if filter.Len() == 1 {
		v, _ := filter.Get("_id")
		switch v.(type) {
		case string, types.ObjectID:
			return []*condition{{sql: idColumn + ` = ?`, args: []any{string(must.NotFail(sjson.MarshalSingleValue(v)))}}}
		}
	}

	c := documentCondition(filter, 0)
	if c == nil {
		return nil
	}

	if c.branches != nil && (always || c.selects) {
		return c.branches
	}

	return []*condition{c}
}

// idColumn is _id spelled as the unique index on it spells it (metadata.IndexColumn). Upstream
// looks documents up by metadata.IDColumn (`->'$._id'`), the same value, but SQLite matches index
// expressions by their form, so every find, update or delete by _id scanned the whole table.
var idColumn = metadata.IndexColumn("_id")

type condition struct {
	sql  string
	args []any

	// branches: sql is their OR, and none of them can hold a row another holds (render); selects:
	// a WHERE runs them as SELECTs of their own
	branches []*condition
	selects  bool
}

// equality: the field's JSON text is one of args, or (unless exact) the field is an array.
type equality struct {
	column string
	args   []any
	exact  bool // _id: never an array
}

func (e equality) value() *condition {
	in := "?" + strings.Repeat(", ?", len(e.args)-1)
	return &condition{sql: fmt.Sprintf(`%s IN (%s)`, e.column, in), args: e.args}
}

// array: '[' … '\' holds every text that starts with '[', the JSON text of any array.
func (e equality) array() *condition {
	return &condition{sql: fmt.Sprintf(`%[1]s >= '[' AND %[1]s < '\'`, e.column)}
}

func (e equality) either() *condition {
	if e.exact {
		return e.value()
	}

	return join([]*condition{e.value(), e.array()}, " OR ")
}

// terms are what a filter document (with the $and inside it) requires, all at once.
type terms struct {
	equalities []equality
	others     []*condition
}

// maxDepth bounds the recursion through $and / $or.
const maxDepth = 8

// maxExpanded: how many equalities render() spreads into alternatives (2^n branches).
const maxExpanded = 3

// documentCondition is the condition a filter document sets; nil when none applies.
func documentCondition(doc *types.Document, depth int) *condition {
	var t terms
	t.collect(doc, depth)

	return t.render()
}

// collect adds the terms of a filter document; $and's documents add theirs to the same set.
func (t *terms) collect(doc *types.Document, depth int) {
	if depth > maxDepth {
		return
	}

	for _, key := range doc.Keys() {
		value := must.NotFail(doc.Get(key))

		switch {
		case key == "$and":
			for _, d := range documentsOf(value) {
				t.collect(d, depth+1)
			}
		case key == "$or":
			if c := orCondition(documentsOf(value), depth); c != nil {
				t.others = append(t.others, c)
			}
		case !strings.HasPrefix(key, "$"):
			t.field(key, value)
		}
	}
}

func documentsOf(value any) []*types.Document {
	arr, ok := value.(*types.Array)
	if !ok {
		return nil
	}

	docs := make([]*types.Document, 0, arr.Len())

	for i := 0; i < arr.Len(); i++ {
		doc, ok := must.NotFail(arr.Get(i)).(*types.Document)
		if !ok {
			return nil
		}

		docs = append(docs, doc)
	}

	return docs
}

// orCondition: a branch without a condition matches anything, and so does the whole $or.
func orCondition(docs []*types.Document, depth int) *condition {
	if len(docs) == 0 {
		return nil
	}

	parts := make([]*condition, len(docs))

	for i, doc := range docs {
		if parts[i] = documentCondition(doc, depth+1); parts[i] == nil {
			return nil
		}
	}

	return join(parts, " OR ")
}

// render ANDs the terms. An equality is "one of the values, or an array", and an OR keeps SQLite
// from using that field in an index together with the others (tenantId AND brand through the
// tenantId+brand index). So the first equalities are spread out: (t AND b) OR (t AND b[]) OR
// (t[] AND b) OR (t[] AND b[]), each branch an index lookup of its own (the array branches find
// nothing where no document holds an array there).
//
// Every branch carries the other terms too, so that it can run on an index of its own, where a
// term on another column of that index (the search text of the tenantId+search index) is tested
// on the index entry and only the rows that pass are read. SQLite's own plan for an OR
// (MULTI-INDEX OR) reads every row a branch's seek finds: 135 ms for a search in a tenant of
// 20,000 products, against 24 ms when prepareWhereClause gives each branch a SELECT of its own
// (rowid IN (… UNION ALL …)). The branches cannot overlap: in each one a field is either one of
// the values or an array. Without other terms a WHERE keeps SQLite's plan, which reads each row
// once where the SELECTs read it twice (102 against 68 ms for a filtered page); a count and a
// sorted read take the branches whatever the terms (whereParts), since they compute on index
// entries (exact condition, sort keys) what they would otherwise parse each row for.
func (t *terms) render() *condition {
	var spread []equality

	var fixed []*condition // in every branch: _id, and equalities past maxExpanded

	for _, e := range t.equalities {
		if !e.exact && len(spread) < maxExpanded {
			spread = append(spread, e)
		} else {
			fixed = append(fixed, e.either())
		}
	}

	// t.others first: SQLite tests terms in the order given, and a text search over the raw row
	// (1 s for 50,000 products) is far cheaper than a JSON lookup in each row (3 s)
	if len(spread) == 0 {
		return join(append(append([]*condition(nil), t.others...), fixed...), " AND ")
	}

	branches := make([]*condition, 0, 1<<len(spread))

	for mask := 0; mask < 1<<len(spread); mask++ {
		branch := append(append([]*condition(nil), t.others...), fixed...)

		for i, e := range spread {
			if mask&(1<<i) == 0 {
				branch = append(branch, e.value())
			} else {
				branch = append(branch, e.array())
			}
		}

		branches = append(branches, join(branch, " AND "))
	}

	c := join(branches, " OR ")
	c.branches = branches
	c.selects = len(t.others) > 0

	return c
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

// field adds the terms for one field of a filter document.
func (t *terms) field(path string, value any) {
	switch v := value.(type) {
	case types.Regex:
		t.regex(path, v)
	case *types.Document:
		t.operators(path, v)
	default:
		t.equality(path, []any{v})
	}
}

// operators handles {f: {$eq: v}}, {f: {$in: […]}} and {f: {$regex: …}}; other operators add
// nothing (the document still has to pass them in Go).
func (t *terms) operators(path string, ops *types.Document) {
	for _, op := range ops.Keys() {
		if !strings.HasPrefix(op, "$") {
			return // an embedded document compared whole
		}
	}

	for _, op := range ops.Keys() {
		value := must.NotFail(ops.Get(op))

		switch op {
		case "$eq":
			t.equality(path, []any{value})
		case "$in":
			if arr, ok := value.(*types.Array); ok && arr.Len() > 0 {
				values := make([]any, arr.Len())
				for i := range values {
					values[i] = must.NotFail(arr.Get(i))
				}

				t.equality(path, values)
			}
		case "$regex":
			if re, ok := regexOperand(ops); ok {
				t.regex(path, re)
			}
		}
	}
}

// equality: the field is one of values, or an array (which may contain one of them).
func (t *terms) equality(path string, values []any) {
	if !plainPath(path) {
		return
	}

	args := make([]any, len(values))

	for i, v := range values {
		switch v := v.(type) {
		case string:
			if !jsonVerbatim(v) {
				return
			}
		case types.ObjectID:
		default:
			return
		}

		args[i] = string(must.NotFail(sjson.MarshalSingleValue(v)))
	}

	// spelled as FerretDB spells index columns; for _id that is the unique index, so SQLite knows
	// it finds one row
	t.equalities = append(t.equalities, equality{column: metadata.IndexColumn(path), args: args, exact: path == "_id"})
}

func (t *terms) regex(path string, re types.Regex) {
	if c := regexCondition(path, re); c != nil {
		t.others = append(t.others, c)
	}
}

// regexOperand is the regular expression of {$regex: …, $options: …} as FerretDB builds it
// (a string pattern, or a regex value whose options $options may set); false where FerretDB
// would refuse the pair (both give options, $options not a string).
func regexOperand(ops *types.Document) (types.Regex, bool) {
	var options string

	if v, err := ops.Get("$options"); err == nil {
		s, ok := v.(string)
		if !ok {
			return types.Regex{}, false
		}

		options = s
	}

	switch v := must.NotFail(ops.Get("$regex")).(type) {
	case string:
		return types.Regex{Pattern: v, Options: options}, true
	case types.Regex:
		if options == "" {
			return v, true
		}

		if v.Options == "" {
			v.Options = options
			return v, true
		}
	}

	return types.Regex{}, false
}

// plainPath: a top-level field that is not one of FerretDB's own columns.
func plainPath(path string) bool {
	return metadata.PlainField(path) && !strings.HasPrefix(path, "_ferretdb_")
}

// regexCondition: the text a literal regular expression can match is in the field's JSON text (a
// top-level field: a string holds its characters verbatim, an array its strings' characters) or,
// for a dotted path, in the document's. Only a literal pattern (metacharacters escaped) with no
// option but i qualifies.
//
// A field can also match by holding a regular expression itself: FerretDB's filter compares a
// stored regex value with the query's (types.Compare: the same source, "(?opts)" + pattern), and
// sjson stores a regex as the JSON string of its pattern. That stored pattern ends with the query's
// pattern, so when the pattern is the literal (no backslash) the containment test sees it; when
// the pattern escapes something, its JSON text holds "\\": the condition also passes text holding the
// pattern's JSON form (the document's text, which is sjson's own) or any backslash (the field's
// text, which SQLite renders).
func regexCondition(path string, re types.Regex) *condition {
	if re.Options != "" && re.Options != "i" {
		return nil
	}

	literal, ok := regexLiteral(re.Pattern)
	if !ok || literal == "" || !jsonVerbatim(literal) {
		return nil
	}

	column := metadata.DefaultColumn
	if plainPath(path) {
		column = metadata.IndexColumn(path)
	}

	c := containsCondition(column, literal, re.Options == "i")
	if c == nil {
		return nil
	}

	if re.Pattern != literal {
		stored := &condition{sql: fmt.Sprintf(`instr(%s, '\') > 0`, column)}
		if column == metadata.DefaultColumn {
			stored = &condition{sql: fmt.Sprintf(`instr(%s, ?) > 0`, column), args: []any{jsonInner(re.Pattern)}}
		}

		c = join([]*condition{c, stored}, " OR ")
	}

	if column != metadata.DefaultColumn {
		// a regex matches a string, an array holding one, or a stored regex (a JSON string too):
		// JSON text from '"' up to '[…', before '\'. SQLite seeks an index on the field by this
		// range, so it prefers the index that holds the field (and tests the rest on its entries)
		c = join([]*condition{{sql: fmt.Sprintf(`%[1]s >= '"' AND %[1]s < '\'`, column)}, c}, " AND ")
	}

	return c
}

// containsCondition: text contains literal (folded: in ASCII case, plus Go's extra folds).
func containsCondition(text, literal string, folded bool) *condition {
	if !folded {
		return &condition{sql: fmt.Sprintf(`instr(%s, ?) > 0`, text), args: []any{literal}}
	}

	// SQLite's LIKE folds ASCII letters only, so the literal must be ASCII; Go's (?i) also folds
	// k to U+212A (Kelvin sign) and s to U+017F (long s), which LIKE cannot see: texts holding
	// either character pass as well.
	if !isASCII(literal) {
		return nil
	}

	sql := fmt.Sprintf(`%s LIKE ? ESCAPE '\'`, text)
	args := []any{likeContains(literal)}

	lower := strings.ToLower(literal)
	if strings.ContainsRune(lower, 'k') {
		sql += fmt.Sprintf(` OR instr(%s, ?) > 0`, text)
		args = append(args, "\u212a")
	}

	if strings.ContainsRune(lower, 's') {
		sql += fmt.Sprintf(` OR instr(%s, ?) > 0`, text)
		args = append(args, "\u017f")
	}

	return &condition{sql: sql, args: args}
}

// likeContains is the LIKE pattern (ESCAPE '\') of texts that contain literal.
func likeContains(literal string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(literal) + "%"
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}

	return true
}

// jsonInner is s as sjson writes it in a document (Go's encoder), without the quotes.
func jsonInner(s string) string {
	b := must.NotFail(json.Marshal(s))
	return string(b[1 : len(b)-1])
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
