package apply

import (
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/internal/benchlog"
)

// BenchmarkHandoff is BenchmarkDecode (package binlog) plus the way to
// the engine's loop: a binlog file read by the file reader's goroutine
// and handed to the engine as `prepl replay` does, within the byte
// budget of the default --memory-budget. The consumer does nothing else,
// so every transaction that finds it waiting wakes it: the worst case of
// the handoff. cpu-ns/txn is the process's CPU (user and system, all
// goroutines, the wake-ups included), which ns/txn on two cores is not;
// sleeps/txn counts its threads' waits, which do not depend on the load.
func BenchmarkHandoff(b *testing.B) {
	for _, w := range benchlog.Workloads {
		b.Run(string(w), func(b *testing.B) {
			path := benchlog.File(b, w)
			txns, rows := handoff(b, path)
			m := benchlog.Start(b)
			cpu, sleeps := processCPU()
			for range b.N {
				handoff(b, path)
			}
			cpu2, sleeps2 := processCPU()
			b.ReportMetric(float64((cpu2-cpu).Nanoseconds())/float64(b.N)/float64(txns), "cpu-ns/txn")
			b.ReportMetric(float64(sleeps2-sleeps)/float64(b.N)/float64(txns), "sleeps/txn")
			m.Report(txns, rows)
		})
	}
}

const benchReadAhead = 12 << 20 // --memory-budget 96MiB / 8

func handoff(b *testing.B, path string) (txns, rows int) {
	r, err := fileset.Open([]string{path}, fileset.Options{ReadAheadBytes: benchReadAhead})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	rd, _ := readerOf(r, benchReadAhead)
	for batch := range rd.Batches() {
		for i := range batch.Txs {
			tx := rd.Take(batch, i)
			txns++
			rows += tx.Rows()
		}
		if batch.Err == io.EOF {
			break
		}
		if batch.Err != nil {
			b.Fatal(batch.Err)
		}
		rd.Recycle(batch)
	}
	return txns, rows
}

// processCPU is the process's CPU time so far, and how many times its
// threads went to sleep waiting (voluntary context switches: a goroutine
// that waits with nothing else to run parks its thread).
func processCPU() (time.Duration, int64) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Nvcsw
}
