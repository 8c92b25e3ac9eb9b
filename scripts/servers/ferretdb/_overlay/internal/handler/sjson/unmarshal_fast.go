// Added (backoffice) to FerretDB v1.24.2's internal/handler/sjson at build time
// (scripts/stack/servers.ts, which lays _overlay/ over a copy of the module); called by
// backends/sqlite/query_iterator.go for every document a query reads.

package sjson

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// UnmarshalFast decodes a document as Unmarshal does, in one pass over its text.
//
// Unmarshal decodes each level of a document into a map of raw messages and each value with an
// encoding/json Decoder of its own (a 512-byte buffer apiece), so a value nested n levels deep is
// parsed n+1 times: half of the CPU a page of 50 products costs the database, most of the rest
// collecting the garbage. This reads the schema, then each value in the schema's order, which is
// the order Marshal writes them in. It handles what Marshal writes; anything else it meets (keys
// in another order, an unexpected token, a string with escapes beyond its reach, a type it leaves
// to upstream) gives up and returns Unmarshal's answer instead, so its answer is always Unmarshal's.
// binData, regex and timestamp values are decoded by upstream's own code, from their bytes.
func UnmarshalFast(data []byte) (*types.Document, error) {
	d := fastDecoder{data: data}
	if doc, ok := d.document(); ok {
		return doc, nil
	}

	return Unmarshal(data)
}

type fastDecoder struct {
	data []byte
	pos  int
}

// document is the top level: {"$s": schema, key: value, …} with the keys of $s.$k in order.
func (d *fastDecoder) document() (*types.Document, bool) {
	if !d.consume('{') {
		return nil, false
	}

	if key, ok := d.string(); !ok || key != "$s" || !d.consume(':') {
		return nil, false
	}

	sch, ok := d.schema()
	if !ok {
		return nil, false
	}

	doc, ok := d.fields(sch, true)
	if !ok || !d.consume('}') {
		return nil, false
	}

	d.space()

	return doc, d.pos == len(d.data)
}

// value decodes one value by its schema, as unmarshalSingleValue does.
func (d *fastDecoder) value(sch *elem) (any, bool) {
	d.space()

	if bytes.HasPrefix(d.data[d.pos:], []byte("null")) {
		d.pos += len("null")
		return types.Null, true
	}

	if sch == nil {
		return nil, false
	}

	switch sch.Type {
	case elemTypeObject:
		return d.object(sch.Schema)
	case elemTypeArray:
		return d.array(sch.Items)
	case elemTypeString:
		return d.string()
	case elemTypeDouble, elemTypeInt, elemTypeLong, elemTypeDate:
		n, ok := d.number()
		if !ok {
			return nil, false
		}

		return numberOf(sch.Type, n)
	case elemTypeBool:
		switch {
		case bytes.HasPrefix(d.data[d.pos:], []byte("true")):
			d.pos += len("true")
			return true, true
		case bytes.HasPrefix(d.data[d.pos:], []byte("false")):
			d.pos += len("false")
			return false, true
		}

		return nil, false
	case elemTypeObjectID:
		s, ok := d.string()
		if !ok || len(s) != 2*types.ObjectIDLen {
			return nil, false
		}

		var id types.ObjectID
		if _, err := hex.Decode(id[:], []byte(s)); err != nil {
			return nil, false
		}

		return id, true
	}

	// binData, regex, timestamp (and anything else): upstream's decoder, on the value's bytes
	start := d.pos
	if !d.skip() {
		return nil, false
	}

	v, err := unmarshalSingleValue(d.data[start:d.pos], sch)

	return v, err == nil
}

// numberOf is a JSON number's text as the value of a numeric type, as encoding/json decodes it.
func numberOf(t elemType, n string) (any, bool) {
	switch t {
	case elemTypeDouble:
		f, err := strconv.ParseFloat(n, 64)
		return f, err == nil
	case elemTypeInt:
		i, err := strconv.ParseInt(n, 10, 32)
		return int32(i), err == nil
	case elemTypeLong:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	default: // elemTypeDate: milliseconds since the epoch
		ms, err := strconv.ParseInt(n, 10, 64)
		return time.UnixMilli(ms), err == nil
	}
}

// object is an embedded document: its keys in its schema's order.
func (d *fastDecoder) object(sch *schema) (any, bool) {
	if sch == nil || !d.consume('{') {
		return nil, false
	}

	if d.consume('}') {
		if len(sch.Keys) != 0 {
			return nil, false
		}

		return new(types.Document), true
	}

	doc, ok := d.fields(sch, false)
	if !ok || len(sch.Keys) == 0 || !d.consume('}') {
		return nil, false
	}

	return doc, true
}

// fields reads a document's members, the keys of its schema in their order; each follows a comma
// when afterMember (at the top level, where $s comes first), else all but the first.
func (d *fastDecoder) fields(sch *schema, afterMember bool) (*types.Document, bool) {
	doc := must.NotFail(types.NewDocument())

	for i, key := range sch.Keys {
		if (afterMember || i > 0) && !d.consume(',') {
			return nil, false
		}

		if k, ok := d.string(); !ok || k != key || !d.consume(':') {
			return nil, false
		}

		v, ok := d.value(sch.Properties[key])
		if !ok {
			return nil, false
		}

		doc.Set(key, v)
	}

	return doc, true
}

// array is an array whose items have one schema each.
func (d *fastDecoder) array(items []*elem) (any, bool) {
	if !d.consume('[') {
		return nil, false
	}

	arr := types.MakeArray(len(items))

	if d.consume(']') {
		return arr, len(items) == 0
	}

	for i, item := range items {
		if i > 0 && !d.consume(',') {
			return nil, false
		}

		v, ok := d.value(item)
		if !ok {
			return nil, false
		}

		arr.Append(v)
	}

	if len(items) == 0 || !d.consume(']') {
		return nil, false
	}

	return arr, true
}

// schema is a document's schema: {"p": {key: elem, …}, "$k": [key, …]}, or {} for no keys.
func (d *fastDecoder) schema() (*schema, bool) {
	sch := new(schema)

	ok := d.members(func(key string) bool {
		switch key {
		case "p":
			sch.Properties = make(map[string]*elem)

			return d.members(func(field string) bool {
				e, ok := d.elem()
				sch.Properties[field] = e

				return ok
			})
		case "$k":
			return d.items(func() bool {
				k, ok := d.string()
				sch.Keys = append(sch.Keys, k)

				return ok
			})
		}

		return false
	})

	return sch, ok
}

// elem is one value's schema: {"t": type, "$s"|"i"|"o"|"s": …}.
func (d *fastDecoder) elem() (*elem, bool) {
	e := new(elem)

	ok := d.members(func(key string) bool {
		switch key {
		case "t":
			t, ok := d.string()
			e.Type = elemType(t)

			return ok
		case "$s":
			s, ok := d.schema()
			e.Schema = s

			return ok
		case "i":
			e.Items = []*elem{}

			return d.items(func() bool {
				item, ok := d.elem()
				e.Items = append(e.Items, item)

				return ok
			})
		case "o":
			o, ok := d.string()
			e.Options = &o

			return ok
		case "s":
			n, ok := d.number()
			if !ok {
				return false
			}

			s, err := strconv.ParseUint(n, 10, 8)
			subtype := types.BinarySubtype(s)
			e.Subtype = &subtype

			return err == nil
		}

		return false
	})

	return e, ok
}

// members reads an object, calling member after each key and its colon to read the value.
func (d *fastDecoder) members(member func(key string) bool) bool {
	if !d.consume('{') {
		return false
	}

	if d.consume('}') {
		return true
	}

	for {
		key, ok := d.string()
		if !ok || !d.consume(':') || !member(key) {
			return false
		}

		if d.consume('}') {
			return true
		}

		if !d.consume(',') {
			return false
		}
	}
}

// items reads an array, calling item to read each value.
func (d *fastDecoder) items(item func() bool) bool {
	if !d.consume('[') {
		return false
	}

	if d.consume(']') {
		return true
	}

	for {
		d.space()

		if !item() {
			return false
		}

		if d.consume(']') {
			return true
		}

		if !d.consume(',') {
			return false
		}
	}
}

// string reads a JSON string. One that is plain (no escape, no control character, valid UTF-8)
// is its bytes; any other is decoded by encoding/json, which decides what it means.
func (d *fastDecoder) string() (string, bool) {
	d.space()

	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return "", false
	}

	start := d.pos
	plain := true

	for i := start + 1; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			raw := d.data[start+1 : i]

			if plain && utf8.Valid(raw) {
				return string(raw), true
			}

			var s string
			err := json.Unmarshal(d.data[start:d.pos], &s)

			return s, err == nil
		case c == '\\':
			plain = false
			i++ // the escaped character, which may be a quote
		case c < 0x20:
			return "", false
		}
	}

	return "", false
}

// number reads a JSON number's text (RFC 8259 grammar, which strconv alone would not enforce:
// it also takes "+1", "0x10" or "Inf").
func (d *fastDecoder) number() (string, bool) {
	d.space()

	data, start, i := d.data, d.pos, d.pos

	digits := func() bool {
		from := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}

		return i > from
	}

	if i < len(data) && data[i] == '-' {
		i++
	}

	switch {
	case i < len(data) && data[i] == '0':
		i++
	case !digits():
		return "", false
	}

	if i < len(data) && data[i] == '.' {
		i++

		if !digits() {
			return "", false
		}
	}

	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++

		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}

		if !digits() {
			return "", false
		}
	}

	d.pos = i

	return string(data[start:i]), true
}

// skip passes over one JSON value, checking only that it ends where a value can.
func (d *fastDecoder) skip() bool {
	d.space()

	if d.pos >= len(d.data) {
		return false
	}

	switch c := d.data[d.pos]; {
	case c == '"':
		_, ok := d.string()
		return ok
	case c == '{':
		return d.members(func(string) bool { return d.skip() })
	case c == '[':
		return d.items(d.skip)
	case c == '-' || (c >= '0' && c <= '9'):
		_, ok := d.number()
		return ok
	}

	for _, literal := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(d.data[d.pos:], []byte(literal)) {
			d.pos += len(literal)
			return true
		}
	}

	return false
}

// consume passes over c (after any white space) when it comes next.
func (d *fastDecoder) consume(c byte) bool {
	d.space()

	if d.pos < len(d.data) && d.data[d.pos] == c {
		d.pos++
		return true
	}

	return false
}

func (d *fastDecoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}
