package apply

import (
	"context"
	"io"
	"testing"

	"github.com/prepl/prepl/internal/budget"
	"github.com/prepl/prepl/txn"
)

// sizedSource yields transactions of the given binlog sizes, each with
// one row change of three columns, then io.EOF.
type sizedSource struct {
	sizes []int
	next  int
}

func (s *sizedSource) Next(context.Context) (*txn.Txn, error) {
	if s.next == len(s.sizes) {
		return nil, io.EOF
	}
	s.next++
	row := &txn.RowChange{Kind: txn.Update, Before: make([]txn.Value, 3), After: make([]txn.Value, 3)}
	return &txn.Txn{Seq: uint64(s.next), Size: s.sizes[s.next-1], Changes: []txn.Change{{Row: row}}}, nil
}

// TestReadAheadBytes: the engine's reader holds at most its byte budget
// of transactions the sequencer has not taken, however many they are; a
// transaction bigger than the budget is read alone, and every one
// arrives, in order.
func TestReadAheadBytes(t *testing.T) {
	const limit = 1 << 20
	var sizes []int
	for i := range 40 {
		sizes = append(sizes, 100<<10+i*1000) // ~100 KiB: about 10 fit
	}
	sizes = append(sizes, 3<<20) // bigger than the whole budget
	for range 20 {
		sizes = append(sizes, 200<<10)
	}
	ahead := budget.New(limit)
	out := make(chan readResult, readQueue)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		readAhead(ctx, &sizedSource{sizes: sizes}, ahead, out)
	}()

	select {
	case <-ahead.Full(): // the reader is a whole budget ahead and waits
	case <-finished:
		t.Fatalf("the reader read all %d transactions ahead without waiting for room", len(sizes))
	}
	held, _, _ := ahead.Stats()
	if held > limit || held <= limit-(110<<10) {
		t.Fatalf("a reader waiting for room holds %d bytes; want at most the budget, %d, and no room for the next", held, limit)
	}
	var bigFootprint int64
	n := 0
	for r := range out {
		if r.err == io.EOF {
			break
		}
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.n != r.tx.Footprint() || r.n < int64(r.tx.Size) {
			t.Fatalf("transaction %d holds %d bytes of the budget; its footprint is %d, its binlog size %d", r.tx.Seq, r.n, r.tx.Footprint(), r.tx.Size)
		}
		n++
		if r.tx.Seq != uint64(n) {
			t.Fatalf("transaction %d arrived as the %dth", r.tx.Seq, n)
		}
		if r.tx.Size == 3<<20 {
			bigFootprint = r.n
		}
		held, _, _ := ahead.Stats()
		if held > limit && held != r.n {
			t.Fatalf("after transaction %d: %d bytes held, more than the budget of %d and not one transaction alone", n, held, limit)
		}
		ahead.Release(r.n)
	}
	if n != len(sizes) {
		t.Fatalf("%d transactions read, want %d", n, len(sizes))
	}
	if _, peak, _ := ahead.Stats(); peak != bigFootprint {
		t.Fatalf("most ever held %d bytes; want the transaction bigger than the budget, alone (%d)", peak, bigFootprint)
	}
}
