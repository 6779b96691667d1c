package binlog_test

import (
	"testing"

	"github.com/prepl/prepl/internal/benchlog"
	"github.com/prepl/prepl/txn"
)

// BenchmarkDecode reads a whole binlog file into transactions: the event
// guard, go-mysql's decoding and the assembler, as `prepl replay` does.
func BenchmarkDecode(b *testing.B) {
	benchlog.PerFile(b, func(b *testing.B, path string) (int, int) {
		return benchlog.Read(b, path, func(*txn.Txn) {})
	})
}
