package binlog

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
)

// fixtures are real MySQL binlogs (anonymous GTIDs, Aurora's padding, a
// compressed transaction).
const fixtures = "/work/shared/fixtures/mysql/"

func startSource(t *testing.T, mutate func(*sandbox.Options)) *sandbox.Server {
	t.Helper()
	opts := sandbox.Defaults()
	opts.Binlog = true
	if mutate != nil {
		mutate(&opts)
	}
	return sandbox.MustStart(t, opts)
}

// readFiles decodes the server's binlog files, failing the test on an
// error.
func readFiles(t *testing.T, s *sandbox.Server) []*txn.Txn {
	t.Helper()
	files, err := s.BinlogFiles()
	if err != nil || len(files) == 0 {
		t.Fatalf("binlog files: %v %v", files, err)
	}
	txns, err := decodeFiles(files)
	if err != nil {
		t.Fatalf("read: %v (after %d txns)", err, len(txns))
	}
	return txns
}

// decodeFiles decodes paths in order with a Decoder, as binlog/fileset's
// reader does without its goroutine: the transactions before the first
// error, and the error (nil at a clean end).
func decodeFiles(paths []string) ([]*txn.Txn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d := NewDecoder(Limits{}, nil)
	var txns []*txn.Txn
	send := func(t *txn.Txn) bool { txns = append(txns, t); return true }
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return txns, err
		}
		err = d.DecodeFile(ctx, filepath.Base(p), bytes.NewReader(b), int64(len(b)), 4, send)
		next := ""
		if i+1 < len(paths) {
			next = filepath.Base(paths[i+1])
		}
		if err := d.EndFile(err, next); err != nil {
			return txns, err
		}
	}
	return txns, nil
}

// rowsOf returns the row changes of tx in order.
func rowsOf(tx *txn.Txn) []*txn.RowChange {
	var out []*txn.RowChange
	for _, c := range tx.Changes {
		if c.Row != nil {
			out = append(out, c.Row)
		}
	}
	return out
}

func show(v txn.Value) any {
	if b, ok := v.([]byte); ok {
		if len(b) > 40 {
			return fmt.Sprintf("%d bytes %x...", len(b), b[:20])
		}
		return fmt.Sprintf("%q", b)
	}
	return v
}

func describe(tx *txn.Txn) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "seq=%d gtid=%s cid=%d flags=%d start=%v end=%v size=%d xa=%v nt=%v lc=%d sn=%d ts=%v",
		tx.Seq, tx.GTID, tx.CommitID, tx.Flags, tx.Start, tx.End, tx.Size, tx.XA, tx.NonTransactional, tx.LastCommitted, tx.SequenceNumber, tx.Timestamp)
	for _, c := range tx.Changes {
		if c.Stmt != nil {
			fmt.Fprintf(&b, "\n   stmt %+v", *c.Stmt)
			continue
		}
		r := c.Row
		fmt.Fprintf(&b, "\n   %v %s flags=%d before=", r.Kind, r.Table.QualifiedName(), r.Flags)
		for _, v := range r.Before {
			fmt.Fprintf(&b, "%T(%v) ", v, show(v))
		}
		b.WriteString(" after=")
		for _, v := range r.After {
			fmt.Fprintf(&b, "%T(%v) ", v, show(v))
		}
	}
	return b.String()
}
