package binlog

import (
	"bytes"
	"reflect"
	"runtime"
	"testing"
	"unsafe"

	"github.com/go-mysql-org/go-mysql/replication"
)

// TestSlabValues: values boxed in slabs are what the runtime's boxing
// makes of them (dynamic type, value, equality), and outlive the slab's
// other references and many collections.
func TestSlabValues(t *testing.T) {
	s := valueSlabs{bytes: slab[[]byte]{size: 3}, ints: slab[int64]{size: 3}}
	var got, want []any
	for i := range 10 {
		b := bytes.Repeat([]byte{byte('a' + i)}, i)
		got = append(got, s.bytes.box(b), s.ints.box(int64(i)<<40-7))
		want = append(want, b, int64(i)<<40-7)
	}
	s = valueSlabs{}
	for range 3 {
		runtime.GC()
	}
	for i := range got {
		if reflect.TypeOf(got[i]) != reflect.TypeOf(want[i]) || !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("value %d: %#v (%T), want %#v (%T)", i, got[i], got[i], want[i], want[i])
		}
	}
	if got[1] != want[1] || got[1] == got[3] {
		t.Fatalf("integers compare as %v == %v: %v", got[1], want[1], got[1] == want[1])
	}
	if b, ok := got[4].([]byte); !ok || string(b) != "cc" {
		t.Fatalf("a []byte value reads %q", b)
	}
}

// TestSlabBoxingAllocates: a slab of n slots boxes n values in one
// allocation.
func TestSlabBoxingAllocates(t *testing.T) {
	b := []byte("abc")
	allocs := testing.AllocsPerRun(100, func() {
		s := slab[[]byte]{size: 8}
		for range 8 {
			_ = s.box(b)
		}
	})
	if allocs != 1 {
		t.Fatalf("%v allocations for 8 values in a slab of 8", allocs)
	}
}

// TestKeptEventsChunkOnlyRows: rows events share chunks; every other
// event kept has memory of its own, since the guard and the assembler
// keep a table map per table id long after its transaction, and a table
// map in a chunk would keep the whole chunk alive.
func TestKeptEventsChunkOnlyRows(t *testing.T) {
	var k keptEvents
	next := func(a, b []byte) bool { // b starts where a ends, in one chunk
		return uintptr(unsafe.Pointer(&b[0]))-uintptr(unsafe.Pointer(&a[0])) == uintptr(len(a))
	}
	last := k.alloc(100, replication.WRITE_ROWS_EVENTv1)
	for _, typ := range []replication.EventType{replication.TABLE_MAP_EVENT, replication.QUERY_EVENT, replication.UNKNOWN_EVENT} {
		m := k.alloc(100, typ)
		r := k.alloc(100, replication.UPDATE_ROWS_EVENTv2)
		if !next(last, r) {
			t.Fatal("rows events do not share a chunk")
		}
		if len(m) != 100 || cap(m) != 100 || next(last, m) || next(m, r) {
			t.Errorf("%v event: in the rows events' chunk, want memory of its own", typ)
		}
		last = r
	}
	if big := k.alloc(keptChunk, replication.WRITE_ROWS_EVENTv1); len(big) != keptChunk || next(last, big) {
		t.Errorf("a rows event larger than a chunk's eighth: in the chunk")
	}
}
