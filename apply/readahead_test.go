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

// bufferedSource is a sizedSource that has every transaction read ahead,
// as binlog.FileReader has what it decoded.
type bufferedSource struct{ sizedSource }

func (s *bufferedSource) Buffered() int { return len(s.sizes) - s.next + 1 } // io.EOF counts

// TestReadAheadBytes: the engine's reader holds at most its byte budget
// of transactions the sequencer has not taken, however many they are and
// however they are batched; a transaction bigger than the budget is read
// alone, and every one arrives, in order. From a source that has
// transactions read ahead they come in batches; from one that does not,
// each as soon as it is read.
func TestReadAheadBytes(t *testing.T) {
	var sizes []int
	for i := range 40 {
		sizes = append(sizes, 100<<10+i*1000) // ~100 KiB: about 10 fit
	}
	sizes = append(sizes, 3<<20) // bigger than the whole budget
	for range 20 {
		sizes = append(sizes, 200<<10)
	}
	for _, buffered := range []bool{false, true} {
		var src Source = &sizedSource{sizes: sizes}
		if buffered {
			src = &bufferedSource{sizedSource{sizes: sizes}}
		}
		batches := readAheadBytes(t, src, len(sizes))
		switch {
		case !buffered && batches != len(sizes)+1: // and io.EOF
			t.Errorf("%d transactions from a source that reads nothing ahead came in %d batches; want one each", len(sizes), batches)
		case buffered && batches > len(sizes)/4:
			t.Errorf("%d transactions read ahead by the source came in %d batches; want a few", len(sizes), batches)
		}
	}
}

// readAheadBytes runs the engine's reader on src, checking the budget, and
// returns the number of batches it handed over.
func readAheadBytes(t *testing.T, src Source, want int) (batches int) {
	t.Helper()
	const limit = 1 << 20
	ahead := budget.New(limit)
	out, free := make(chan readBatch, readQueueBatches(src)), make(chan readBatch, freeBatches)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		readAhead(ctx, src, ahead, out, free)
	}()

	select {
	case <-ahead.Full(): // the reader is a whole budget ahead and waits
	case <-finished:
		t.Fatalf("the reader read all %d transactions ahead without waiting for room", want)
	}
	held, _, _ := ahead.Stats()
	if held > limit || held <= limit-(110<<10) {
		t.Fatalf("a reader waiting for room holds %d bytes; want at most the budget, %d, and no room for the next", held, limit)
	}
	var bigFootprint int64
	n := 0
	for b := range out {
		batches++
		held, _, _ := ahead.Stats()
		if held > limit && (len(b.txs) != 1 || held != b.ns[0]) {
			t.Fatalf("batch %d: %d bytes held, more than the budget of %d and not one transaction alone", batches, held, limit)
		}
		for i, tx := range b.txs {
			if b.ns[i] != tx.Footprint() || b.ns[i] < int64(tx.Size) {
				t.Fatalf("transaction %d holds %d bytes of the budget; its footprint is %d, its binlog size %d", tx.Seq, b.ns[i], tx.Footprint(), tx.Size)
			}
			n++
			if tx.Seq != uint64(n) {
				t.Fatalf("transaction %d arrived as the %dth", tx.Seq, n)
			}
			if tx.Size == 3<<20 {
				bigFootprint = b.ns[i]
			}
			ahead.Release(b.ns[i])
		}
		if b.err == io.EOF {
			break
		}
		if b.err != nil {
			t.Fatal(b.err)
		}
		select {
		case free <- readBatch{txs: b.txs[:0], ns: b.ns[:0]}:
		default:
		}
	}
	if n != want {
		t.Fatalf("%d transactions read, want %d", n, want)
	}
	if _, peak, _ := ahead.Stats(); peak != bigFootprint {
		t.Fatalf("most ever held %d bytes; want the transaction bigger than the budget, alone (%d)", peak, bigFootprint)
	}
	return batches
}
