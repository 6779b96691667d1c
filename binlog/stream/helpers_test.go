package stream

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
)

func startSource(t *testing.T, mutate func(*sandbox.Options)) *sandbox.Server {
	t.Helper()
	opts := sandbox.Defaults()
	opts.Binlog = true
	if mutate != nil {
		mutate(&opts)
	}
	return sandbox.MustStart(t, opts)
}

func streamConfig(s *sandbox.Server) Config {
	return Config{Host: "127.0.0.1", Port: uint16(s.Port), User: "root", StopAtEnd: true}
}

// readAll drains r until io.EOF; any other error fails the test.
func readAll(t *testing.T, r binlog.Reader) []*txn.Txn {
	t.Helper()
	txns, err := readUntilErr(r)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("read: %v (after %d txns)", err, len(txns))
	}
	return txns
}

func readUntilErr(r binlog.Reader) ([]*txn.Txn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var txns []*txn.Txn
	for {
		tx, err := r.Next(ctx)
		if err != nil {
			return txns, err
		}
		txns = append(txns, tx)
	}
}

// readFiles reads the server's binlog files with binlog/fileset's reader:
// the stream's tests compare the two.
func readFiles(t *testing.T, s *sandbox.Server, opt fileset.Options) []*txn.Txn {
	t.Helper()
	files, err := s.BinlogFiles()
	if err != nil || len(files) == 0 {
		t.Fatalf("binlog files: %v %v", files, err)
	}
	r, err := fileset.Open(files, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return readAll(t, r)
}

func readStream(t *testing.T, cfg Config) []*txn.Txn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return readAll(t, r)
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
