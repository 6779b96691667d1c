package fileset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/prepl/prepl/sandbox"
)

// TestReadAheadBytes: the file reader holds at most ReadAheadBytes of
// decoded transactions that Next has not returned, however many they
// are and however they are batched; a transaction bigger than that is
// parsed alone, and every one is returned, in order.
func TestReadAheadBytes(t *testing.T) {
	s := startSource(t, nil)
	db := sandbox.MustOpen(t, s, "")
	sandbox.MustExec(t, db, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, b LONGBLOB)")
	var stmts []string
	for i := range 60 {
		n := 40000 // about 80 KiB of footprint each: a few fit
		if i == 40 {
			n = 700000 // bigger than the whole budget
		}
		stmts = append(stmts, fmt.Sprintf("INSERT INTO d.t VALUES (%d, REPEAT('x', %d))", i, n))
	}
	sandbox.MustExec(t, db, stmts...)
	files, err := s.BinlogFiles()
	if err != nil {
		t.Fatal(err)
	}
	const limit = 256 << 10
	r, err := Open(files, Options{ReadAheadBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	ahead := r.ReadAhead().Budget()
	select {
	case <-ahead.Full(): // the parser is a whole budget ahead and waits
	case <-time.After(30 * time.Second):
		t.Fatal("the reader did not wait for room: it parsed every transaction ahead, or stopped")
	}
	if held, _, _ := ahead.Stats(); held > limit || held <= limit-(50<<10) {
		t.Fatalf("a parser waiting for room holds %d bytes; want at most the budget, %d, and no room for the next", held, limit)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var big int64
	var read []int
	most := 0 // transactions Next had at hand, decoded, at most
	for {
		most = max(most, r.ReadAhead().Buffered())
		held, _, _ := ahead.Stats()
		tx, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		// held was counted before tx was returned, so it includes tx.
		if held > limit && held != tx.Footprint() {
			t.Fatalf("%d bytes held, more than the budget of %d and not one transaction alone", held, limit)
		}
		if tx.Footprint() > limit {
			big = tx.Footprint()
		}
		if len(tx.Changes) == 1 && tx.Changes[0].Row != nil && tx.Changes[0].Row.After != nil {
			read = append(read, int(tx.Changes[0].Row.After[0].(int64)))
		}
	}
	if most < 2 {
		t.Fatalf("Next never had more than %d transaction at hand: the parser hands them over one at a time, not in batches", most)
	}
	if len(read) != 60 || read[40] != 40 || read[59] != 59 {
		t.Fatalf("rows read in this order: %v; want ids 0 to 59", read)
	}
	if _, peak, _ := ahead.Stats(); big == 0 || peak != big {
		t.Fatalf("most ever held %d bytes; want the transaction bigger than the budget, alone (%d)", peak, big)
	}
}
