package analyze

import (
	"container/heap"
	"sort"
)

// heavyHitters counts occurrences of names in bounded memory with the
// Space-Saving algorithm (Metwally et al.): it keeps `capacity` counters;
// a new name takes over the smallest one. Every name counted more than
// total/capacity times is kept, and a kept count overestimates the truth by
// at most its Err.
type heavyHitters struct {
	capacity int
	byName   map[string]*hitter
	h        hitterHeap
	total    uint64
}

type hitter struct {
	name  string
	count uint64
	err   uint64
	i     int
}

func newHeavyHitters(capacity int) *heavyHitters {
	return &heavyHitters{capacity: capacity, byName: map[string]*hitter{}}
}

func (hh *heavyHitters) add(name string, n uint64) {
	hh.total += n
	if e, ok := hh.byName[name]; ok {
		e.count += n
		heap.Fix(&hh.h, e.i)
		return
	}
	if len(hh.h) < hh.capacity {
		e := &hitter{name: name, count: n}
		hh.byName[name] = e
		heap.Push(&hh.h, e)
		return
	}
	e := hh.h[0] // the smallest: replaced
	delete(hh.byName, e.name)
	e.name, e.err, e.count = name, e.count, e.count+n
	hh.byName[name] = e
	heap.Fix(&hh.h, 0)
}

// top returns the k largest counts, largest first.
func (hh *heavyHitters) top(k int) []hitter {
	out := make([]hitter, 0, len(hh.h))
	for _, e := range hh.h {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].count != out[j].count {
			return out[i].count > out[j].count
		}
		return out[i].name < out[j].name
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}

type hitterHeap []*hitter

func (h hitterHeap) Len() int           { return len(h) }
func (h hitterHeap) Less(i, j int) bool { return h[i].count < h[j].count }
func (h hitterHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].i, h[j].i = i, j
}
func (h *hitterHeap) Push(x any) {
	e := x.(*hitter)
	e.i = len(*h)
	*h = append(*h, e)
}
func (h *hitterHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// largest keeps the k items with the largest keys seen.
type largest[T any] struct {
	k     int
	items []ranked[T] // a min-heap on key
}

type ranked[T any] struct {
	key  float64
	item T
}

func (l *largest[T]) add(key float64, item T) {
	if len(l.items) < l.k {
		l.items = append(l.items, ranked[T]{key, item})
		l.up(len(l.items) - 1)
		return
	}
	if l.k == 0 || key <= l.items[0].key {
		return
	}
	l.items[0] = ranked[T]{key, item}
	l.down(0)
}

// wouldKeep reports whether an item of key would be kept now.
func (l *largest[T]) wouldKeep(key float64) bool {
	return l.k > 0 && (len(l.items) < l.k || key > l.items[0].key)
}

// sorted returns the items, largest key first.
func (l *largest[T]) sorted() []T {
	c := append([]ranked[T](nil), l.items...)
	sort.SliceStable(c, func(i, j int) bool { return c[i].key > c[j].key })
	out := make([]T, len(c))
	for i, r := range c {
		out[i] = r.item
	}
	return out
}

func (l *largest[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if l.items[p].key <= l.items[i].key {
			return
		}
		l.items[p], l.items[i] = l.items[i], l.items[p]
		i = p
	}
}

func (l *largest[T]) down(i int) {
	n := len(l.items)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && l.items[c+1].key < l.items[c].key {
			c++
		}
		if l.items[i].key <= l.items[c].key {
			return
		}
		l.items[i], l.items[c] = l.items[c], l.items[i]
		i = c
	}
}
