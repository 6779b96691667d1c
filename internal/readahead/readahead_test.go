package readahead

import (
	"cmp"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/prepl/prepl/txn"
)

// sized produces transactions of the given binlog sizes, each with one
// row change of three columns, then ends with end (nil: io.EOF).
func sized(sizes []int, end error) Produce {
	next := 0
	return FromNext(func(context.Context) (*txn.Txn, error) {
		if next == len(sizes) {
			return nil, cmp.Or(end, io.EOF)
		}
		next++
		row := &txn.RowChange{Kind: txn.Update, Before: make([]txn.Value, 3), After: make([]txn.Value, 3)}
		return &txn.Txn{Seq: uint64(next), Size: sizes[next-1], Changes: []txn.Change{{Row: row}}}, nil
	})
}

func testSizes() []int {
	var sizes []int
	for i := range 40 {
		sizes = append(sizes, 100<<10+i*1000) // ~100 KiB: about 10 fit
	}
	sizes = append(sizes, 3<<20) // bigger than the whole budget
	for range 20 {
		sizes = append(sizes, 200<<10)
	}
	return sizes
}

// TestBudget: the reader holds at most its byte budget of transactions
// the consumer has not taken, however many they are and however they are
// batched; a transaction bigger than the budget is read alone, and every
// one arrives, in order. Batched (a file, or a live source whose next
// transaction is at hand), they come a few batches in all; eager (a live
// source whose next one is not), each as soon as it is read.
func TestBudget(t *testing.T) {
	sizes := testSizes()
	for _, mode := range []struct {
		name   string
		atHand func() bool
	}{{"file", nil}, {"live, next at hand", func() bool { return true }}, {"live, waiting", func() bool { return false }}} {
		eager := mode.atHand != nil && !mode.atHand()
		const limit = 1 << 20
		r := Start(sized(sizes, nil), limit, mode.atHand)
		select {
		case <-r.Budget().Full(): // the reader is a whole budget ahead and waits
		case <-time.After(30 * time.Second):
			t.Fatal("the reader did not fill its budget")
		}
		held, _, _ := r.Budget().Stats()
		if held > limit || held <= limit-(110<<10) {
			t.Fatalf("%s: a reader waiting for room holds %d bytes; want at most the budget, %d, and no room for the next", mode.name, held, limit)
		}
		var bigFootprint int64
		n, batches := 0, 0
		for b := range r.Batches() {
			batches++
			held, _, _ := r.Budget().Stats()
			if held > limit && (len(b.Txs) != 1 || held != b.ns[0]) {
				t.Fatalf("batch %d: %d bytes held, more than the budget of %d and not one transaction alone", batches, held, limit)
			}
			for i := range b.Txs {
				fp := b.ns[i]
				tx := r.Take(b, i)
				if fp != tx.Footprint() || fp < int64(tx.Size) {
					t.Fatalf("transaction %d held %d bytes of the budget; its footprint is %d, its binlog size %d", tx.Seq, fp, tx.Footprint(), tx.Size)
				}
				n++
				if tx.Seq != uint64(n) {
					t.Fatalf("transaction %d arrived as the %dth", tx.Seq, n)
				}
				if tx.Size == 3<<20 {
					bigFootprint = fp
				}
			}
			if b.Err == io.EOF {
				break
			}
			if b.Err != nil {
				t.Fatal(b.Err)
			}
			r.Recycle(b)
		}
		if n != len(sizes) {
			t.Fatalf("%d transactions read, want %d", n, len(sizes))
		}
		if _, peak, _ := r.Budget().Stats(); peak != bigFootprint {
			t.Fatalf("most ever held %d bytes; want the transaction bigger than the budget, alone (%d)", peak, bigFootprint)
		}
		switch {
		case eager && batches != len(sizes)+1: // and io.EOF
			t.Errorf("%s: %d transactions came in %d batches; want one each", mode.name, len(sizes), batches)
		case !eager && batches > len(sizes)/4:
			t.Errorf("%s: %d transactions came in %d batches; want a few", mode.name, len(sizes), batches)
		}
		r.Close(nil)
	}
}

// TestNext: one at a time, every transaction, then the error that ended
// the reading, again on every call; Close stops a producer that waits for
// room, and Next then says so.
func TestNext(t *testing.T) {
	ctx := context.Background()
	damaged := errors.New("damaged")
	r := Start(sized([]int{10, 20, 30}, damaged), 1<<20, nil)
	for want := uint64(1); want <= 3; want++ {
		tx, err := r.Next(ctx)
		if err != nil || tx.Seq != want {
			t.Fatalf("Next: %v, %v; want transaction %d", tx, err, want)
		}
	}
	for range 2 {
		if _, err := r.Next(ctx); !errors.Is(err, damaged) {
			t.Fatalf("Next after the last: %v, want %v", err, damaged)
		}
	}
	r.Close(nil)
	if held, _, _ := r.Budget().Stats(); held != 0 {
		t.Fatalf("%d bytes still held after every transaction was taken", held)
	}

	stopped := errors.New("stopped")
	r = Start(sized(testSizes(), nil), 1<<20, nil)
	<-r.Budget().Full()
	done := make(chan struct{})
	go func() { r.Close(stopped); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not stop a producer waiting for room")
	}
	if _, err := r.Next(ctx); !errors.Is(err, stopped) {
		t.Fatalf("Next after Close: %v, want %v", err, stopped)
	}
	r.Close(nil) // again: nothing more, and the first reason stays
	if _, err := r.Next(ctx); !errors.Is(err, stopped) {
		t.Fatalf("Next after a second Close: %v, want %v", err, stopped)
	}
}
