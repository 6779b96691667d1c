package apply

import (
	"context"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/internal/benchlog"
	"github.com/prepl/prepl/internal/budget"
)

// BenchmarkHandoff is BenchmarkDecode (package binlog) plus the way to
// the engine's loop: a binlog file read by the file reader's goroutine
// and handed to the engine as `prepl replay` does, within the byte
// budgets of the default --memory-budget. The consumer does nothing else,
// so every transaction that finds it waiting wakes it: the worst case of
// the handoff. cpu-ns/txn is the process's CPU (user and system, all
// goroutines, the wake-ups included), which ns/txn on two cores is not.
func BenchmarkHandoff(b *testing.B) {
	for _, w := range benchlog.Workloads {
		b.Run(string(w), func(b *testing.B) {
			path := benchlog.File(b, w)
			txns, rows := handoff(b, path)
			m := benchlog.Start(b)
			cpu := processCPU()
			for range b.N {
				handoff(b, path)
			}
			b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N)/float64(txns), "cpu-ns/txn")
			m.Report(txns, rows)
		})
	}
}

const benchReadAhead = 6 << 20 // --memory-budget 96MiB / 16, each queue

func handoff(b *testing.B, path string) (txns, rows int) {
	r, err := binlog.OpenFiles([]string{path}, binlog.FileOptions{ReadAheadBytes: benchReadAhead})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	ahead := budget.New(benchReadAhead)
	out := make(chan readResult, readQueue)
	go readAhead(ctx, r, ahead, out)
	for res := range out {
		if res.err == io.EOF {
			break
		}
		if res.err != nil {
			b.Fatal(res.err)
		}
		ahead.Release(res.n)
		txns++
		rows += res.tx.Rows()
	}
	return txns, rows
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
