package analyze

import "github.com/prepl/prepl/txn"

// shapeCache remembers the shape of recent units. Simulated runs often
// form the same unit (the same consecutive transactions), and computing a
// shape (the engine's compaction) is the most expensive step of a run. A
// unit is named by its first and last transaction, which names its members.
//
// Every run holds only transactions close to the newest one given (the
// unit being formed and the reader's channel), so entries older than
// margin transactions are dropped: memory is bounded.
type shapeCache struct {
	shape   Shaper
	cat     txn.Catalog
	margin  uint64
	entries map[[2]uint64]UnitShape
	order   [][2]uint64 // insertion order
	newest  uint64
}

func newShapeCache(shape Shaper, cat txn.Catalog, margin int) *shapeCache {
	return &shapeCache{shape: shape, cat: cat, margin: uint64(margin), entries: map[[2]uint64]UnitShape{}}
}

// of returns the shape of the unit members.
func (c *shapeCache) of(members []*txn.Txn) UnitShape {
	k := [2]uint64{members[0].Seq, members[len(members)-1].Seq}
	if s, ok := c.entries[k]; ok {
		return s
	}
	s := c.shape(members, c.cat)
	c.entries[k] = s
	c.order = append(c.order, k)
	c.newest = max(c.newest, k[1])
	for len(c.order) > 0 && c.order[0][1]+c.margin < c.newest {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
	if len(c.order) == 0 && cap(c.order) > 1024 {
		c.order = nil
	}
	return s
}
