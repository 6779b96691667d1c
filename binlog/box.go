package binlog

import (
	"unsafe"

	"github.com/prepl/prepl/txn"
)

// Putting a []byte or an int64 outside 0..255 in a txn.Value (an
// interface) copies it into an allocation of its own: for an oltp
// transaction, about sixteen allocations of 8 or 24 bytes, half of all
// that decoding it allocated. The fast rows decoding (appendRows) puts
// them in slabs instead, a slab for many values, and makes each txn.Value
// point at its slot, as the runtime points it at the copy it allocates.

// valueSlabs hold the values of decoded rows: their slots, strings and
// integers.
type valueSlabs struct {
	rows      rowSlots
	bytes     slab[[]byte]
	ints      slab[int64]
	decimals  slab[txn.Decimal]
	temporals slab[txn.Temporal]
	text      textArena // the bytes of decimals and temporals
}

// newValueSlabs returns slabs of rows row slots and values slots of each
// type.
func newValueSlabs(rows, values int) valueSlabs {
	return valueSlabs{rows: rowSlots{size: rows}, bytes: slab[[]byte]{size: values}, ints: slab[int64]{size: values},
		decimals: slab[txn.Decimal]{size: values}, temporals: slab[txn.Temporal]{size: values}}
}

// rowSlots hands out the []any of rows, size slots at a time, where a
// row was an allocation of its own.
type rowSlots struct {
	free []any
	size int
}

// take returns n slots of their own.
func (r *rowSlots) take(n int) []any {
	if n > len(r.free) {
		if n > r.size/4 {
			return make([]any, n)
		}
		r.free = make([]any, r.size)
	}
	v := r.free[:n:n]
	r.free = r.free[n:]
	return v
}

// slotType is what a slab holds: types an interface holds by a pointer.
type slotType interface {
	[]byte | int64 | txn.Decimal | txn.Temporal
}

// slab hands out slots of type T, slots at a time.
//
// Invariant: a slot is written once, before it is boxed, and never
// again (an interface's value is immutable); a full slab is left to the
// values that point into it, never reused. The values are slices of the
// events they were read from, which share their memory with the events
// around them (keptEvents): a slab of slots holds as much.
type slab[T slotType] struct {
	free []T
	size int // slots per slab
}

// box returns v as a txn.Value whose data is a slot of s.
func (s *slab[T]) box(v T) any {
	if len(s.free) == cap(s.free) {
		s.free = make([]T, 0, max(s.size, 1))
	}
	s.free = append(s.free, v)
	return boxAt(&s.free[len(s.free)-1])
}

// boxAt returns *p as an interface whose data word is p, where Go would
// copy *p to the heap and point there (T is neither a pointer nor
// pointer-shaped, so an interface holds it by a pointer to a T). *p must
// not change afterwards.
func boxAt[T slotType](p *T) any {
	var zero T
	v := any(zero) // the type word, and no allocation: a nil slice or 0
	(*eface)(unsafe.Pointer(&v)).data = unsafe.Pointer(p)
	return v
}

// eface is the layout of an interface without methods (any).
type eface struct {
	typ, data unsafe.Pointer
}

// textArena holds the text of decoded DECIMAL and temporal values (which
// go-mysql formats as strings, each an allocation of its own) in chunks
// of many values.
//
// Invariant: the bytes below len(buf) are never written again; a string
// made of them (text) points into the chunk. A full chunk is left to
// the strings that point into it.
type textArena struct {
	buf []byte
}

// textChunk is the bytes of a text arena's chunk.
const textChunk = 4096

// start returns the arena's bytes with room for n more, to append one
// value to; text takes the value once written. An append past the room
// moves the bytes to a new array, which is as safe: the strings made
// before point into the old one, which is never written again.
func (a *textArena) start(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(textChunk, n))
	}
	return a.buf
}

// text returns the bytes b appended to what start returned as a string,
// and keeps them.
func (a *textArena) text(b []byte) string {
	n := len(b) - len(a.buf)
	if n <= 0 {
		return ""
	}
	a.buf = b
	return unsafe.String(&b[len(b)-n], n)
}
