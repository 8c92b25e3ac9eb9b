// Added (backoffice) to FerretDB v1.24.2's internal/handler at build time (scripts/stack/servers.ts
// lays _overlay/ over a copy of the module); used by msg_aggregate.go and msg_count.go.

package handler

import (
	"context"
	"math"
	"strings"

	"github.com/FerretDB/FerretDB/internal/backends"
	"github.com/FerretDB/FerretDB/internal/handler/common"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// countStages is a pipeline that only counts: [{$match: filter}, {$group: {_id: id, field: {$sum: 1}}}],
// what the Node driver's countDocuments(filter) sends (it adds $skip and $limit only when asked,
// and those pipelines go the usual way).
type countStages struct {
	filter *types.Document
	id     any    // the group's _id, a constant
	field  string // the count's name
	long   bool   // {$sum: int64(1)}: the sum is a long, as $group makes it
}

// countPipeline recognizes a counting pipeline; its stages were already validated.
func countPipeline(stages []any) (*countStages, bool) {
	if len(stages) != 2 {
		return nil, false
	}

	match, ok := onlyKey(stages[0], "$match")
	if !ok {
		return nil, false
	}

	filter, ok := match.(*types.Document)
	if !ok {
		return nil, false
	}

	v, ok := onlyKey(stages[1], "$group")
	if !ok {
		return nil, false
	}

	group, ok := v.(*types.Document)
	if !ok || group.Len() != 2 || !group.Has("_id") {
		return nil, false
	}

	res := &countStages{filter: filter, id: must.NotFail(group.Get("_id"))}

	// a constant: every document falls in one group, whose _id it is
	switch id := res.id.(type) {
	case string:
		if strings.HasPrefix(id, "$") {
			return nil, false // a field path or variable
		}
	case int32, int64, float64, bool, types.NullType:
	default:
		return nil, false // documents and arrays may hold expressions
	}

	for _, key := range group.Keys() {
		if key != "_id" {
			res.field = key
		}
	}

	sum, ok := onlyKey(must.NotFail(group.Get(res.field)), "$sum")
	if !ok {
		return nil, false
	}

	switch sum {
	case int32(1):
	case int64(1):
		res.long = true
	default:
		return nil, false
	}

	return res, true
}

// onlyKey is the value of a document's one key, when it is key.
func onlyKey(v any, key string) (any, bool) {
	doc, ok := v.(*types.Document)
	if !ok || doc.Len() != 1 || !doc.Has(key) {
		return nil, false
	}

	return must.NotFail(doc.Get(key)), true
}

// documents is the $group's answer to a count of n: no group at all when nothing matched; the
// count as $sum makes it (aggregations.SumNumbers: an int, or a long past int32 or for a long 1).
func (cs *countStages) documents(n int64) []*types.Document {
	if n == 0 {
		return nil
	}

	var count any = n
	if !cs.long && n <= math.MaxInt32 {
		count = int32(n)
	}

	return []*types.Document{must.NotFail(types.NewDocument("_id", cs.id, cs.field, count))}
}

// countExact counts the documents of a non-capped collection matching filter in the backend
// (backends.ExactCounter); false when it cannot (the filter has no exact SQL form, see
// backends/sqlite/exact.go), and the caller counts as upstream does.
func countExact(ctx context.Context, c backends.Collection, filter *types.Document) (int64, bool, error) {
	counter, ok := c.(backends.ExactCounter)
	if !ok {
		return 0, false, nil
	}

	if filter == nil {
		filter = types.MakeDocument(0) // the count command without a query
	}

	res, err := counter.CountExact(ctx, &backends.CountExactParams{
		Filter: filter,
		Match: func(doc *types.Document) (bool, error) {
			return common.FilterDocument(doc, filter)
		},
	})
	if err != nil {
		return 0, false, lazyerrors.Error(err)
	}

	return res.Count, res.Exact, nil
}
