// Added (backoffice) to FerretDB v1.24.2's internal/handler at build time (scripts/stack/servers.ts
// lays _overlay/ over a copy of the module); used by msg_find.go.

package handler

import (
	"errors"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/FerretDB/FerretDB/internal/handler/common"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/iterator"
	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
)

// maxPushedSortKeys bounds the ORDER BY we build; our sorts have one or two keys.
const maxPushedSortKeys = 4

var plainSortField = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// sortPushable: upstream sorts every matching document in Go, so a page of 50 out of 600
// candidates decodes all 600. A sort on top-level fields is sent to SQL instead (see
// backends/sqlite/order.go), which orders the rows exactly for the simple values below.
func sortPushable(sort *types.Document) bool {
	if sort.Len() == 0 || sort.Len() > maxPushedSortKeys {
		return false
	}

	for _, key := range sort.Keys() {
		if !plainSortField.MatchString(key) || strings.HasPrefix(key, "_ferretdb_") {
			return false
		}
	}

	return true
}

// sortPushedDown: the query parameters carry a field sort (not upstream's $natural).
func sortPushedDown(sort *types.Document) bool {
	return sort.Len() > 0 && !sort.Has("$natural")
}

// simpleSortValues: every sort field of doc is missing or holds a value SQL ordered exactly.
func simpleSortValues(doc *types.Document, sort *types.Document) bool {
	for _, key := range sort.Keys() {
		v, err := doc.Get(key)
		if err != nil {
			continue // missing sorts as null
		}

		switch v := v.(type) {
		case types.NullType, int32, int64, string, types.ObjectID, bool, time.Time:
		case float64:
			if math.IsNaN(v) {
				return false
			}
		default:
			return false
		}
	}

	return true
}

// sortedBySQL passes on documents that SQL ordered, already filtered. SQL puts rows holding a
// value it cannot order before all others, so when the first document that passes the filter
// has only simple sort values, no matching document has any other, and SQL's order is the
// answer's. Otherwise every document is read and sorted in Go, as upstream does.
func sortedBySQL(iter types.DocumentsIterator, closer *iterator.MultiCloser, sort *types.Document) (types.DocumentsIterator, error) { //nolint:lll // for readability
	_, first, err := iter.Next()
	if errors.Is(err, iterator.ErrIteratorDone) {
		return iter, nil
	}

	if err != nil {
		return nil, lazyerrors.Error(err)
	}

	if simpleSortValues(first, sort) {
		pending := first
		res := iterator.ForFunc(func() (struct{}, *types.Document, error) {
			if pending != nil {
				doc := pending
				pending = nil

				return struct{}{}, doc, nil
			}

			return iter.Next()
		})
		closer.Add(res)

		return res, nil
	}

	rest, err := iterator.ConsumeValues(iter)
	if err != nil {
		return nil, lazyerrors.Error(err)
	}

	docs := append([]*types.Document{first}, rest...)
	if err = common.SortDocuments(docs, sort); err != nil {
		return nil, err
	}

	res := iterator.Values(iterator.ForSlice(docs))
	closer.Add(res)

	return res, nil
}
