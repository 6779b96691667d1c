// Package budget bounds the bytes a producer may hold ahead of its
// consumer: the transactions a binlog reader has decoded and the engine
// has not yet taken, counted by their size in memory, not by their number,
// so that big transactions do not multiply what a queue holds. Counted in
// items of 1, it is a semaphore with a limit that can change (the units
// the renderer keeps rendered ahead).
package budget

import (
	"context"
	"sync"
)

// Budget is a byte semaphore for items: one producer acquires an item's
// bytes (Acquire), whoever takes the item releases them (Release).
//
// Invariant: the bytes held never exceed the limit, except by one item
// larger than the limit, which is taken alone (nothing else held), so
// that it still passes, and until what was held when SetLimit lowered the
// limit is released.
type Budget struct {
	limit int64

	mu    sync.Mutex
	held  int64
	items int
	peak  int64
	waits uint64
	room  chan struct{} // a Release wakes the waiting Acquire
	full  chan struct{} // an Acquire started to wait (see Full)
}

// New returns a budget of limit bytes (at least 1).
func New(limit int64) *Budget {
	return &Budget{limit: max(limit, 1), room: make(chan struct{}, 1), full: make(chan struct{}, 1)}
}

// Limit is the budget's size in bytes.
func (b *Budget) Limit() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// SetLimit resizes the budget (at least 1). What is held stays held: a
// smaller limit only makes later Acquires wait longer; a larger one lets
// a waiting Acquire through at once.
func (b *Budget) SetLimit(limit int64) {
	b.mu.Lock()
	b.limit = max(limit, 1)
	b.mu.Unlock()
	b.wake()
}

// Acquire takes the n bytes of one item, waiting while they do not fit
// beside what is held. With nothing held it takes n whatever its size.
func (b *Budget) Acquire(ctx context.Context, n int64) error {
	for {
		b.mu.Lock()
		if b.take(n) {
			b.mu.Unlock()
			return nil
		}
		b.waits++
		b.mu.Unlock()
		select {
		case b.full <- struct{}{}:
		default:
		}
		select {
		case <-b.room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// TryAcquire takes the n bytes of one item if they fit now, as Acquire
// would without waiting. A producer that holds items it has not yet
// handed over (a batch) must hand them over before it waits in Acquire:
// their bytes may be what Acquire waits for.
func (b *Budget) TryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.take(n)
}

func (b *Budget) take(n int64) bool {
	if b.items != 0 && b.held+n > b.limit {
		return false
	}
	b.held += n
	b.items++
	b.peak = max(b.peak, b.held)
	return true
}

// Release gives back the n bytes of one item acquired before.
func (b *Budget) Release(n int64) {
	b.mu.Lock()
	b.held -= n
	b.items--
	if b.held < 0 || b.items < 0 {
		panic("budget: more released than acquired")
	}
	b.mu.Unlock()
	b.wake()
}

// wake lets the waiting Acquire, if any, try again.
func (b *Budget) wake() {
	select {
	case b.room <- struct{}{}:
	default:
	}
}

// Stats are the bytes held now, the most ever held, and how many times
// Acquire had to wait for room.
func (b *Budget) Stats() (held, peak int64, waits uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held, b.peak, b.waits
}

// Full receives when an Acquire starts to wait for room (at most one
// signal pending): the producer is a whole budget ahead.
func (b *Budget) Full() <-chan struct{} { return b.full }
