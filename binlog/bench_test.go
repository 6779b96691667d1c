package binlog_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/internal/benchlog"
)

// BenchmarkDecode reads a whole binlog file into transactions: the event
// guard, go-mysql's decoding and the assembler, as `prepl replay` does.
func BenchmarkDecode(b *testing.B) {
	for _, w := range benchlog.Workloads {
		b.Run(string(w), func(b *testing.B) {
			path := benchlog.File(b, w)
			txns, rows := decodeFile(b, path)
			m := benchlog.Start(b)
			for range b.N {
				decodeFile(b, path)
			}
			m.Report(txns, rows)
		})
	}
}

// decodeFile reads path to its end and counts its transactions and rows.
func decodeFile(b *testing.B, path string) (txns, rows int) {
	r, err := binlog.OpenFiles([]string{path}, binlog.FileOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for {
		tx, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return txns, rows
		}
		if err != nil {
			b.Fatal(err)
		}
		txns++
		rows += tx.Rows()
	}
}
