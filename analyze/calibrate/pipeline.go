package calibrate

import (
	"errors"
	"io"
	"time"

	"github.com/prepl/prepl/analyze"
)

// PipelineTxns is how many transactions of the binlog Pipeline times.
const PipelineTxns = 20000

// ReplayOverDryRun is a replay's CPU over its dry run's (reading, decoding
// and rendering SQL, what Pipeline times): the dry run leaves out
// dependency keys, commit units, compaction and the driver's writes, and
// renders every transaction alone, where the replay renders compacted
// units. Measured with `prepl replay` and `prepl replay --dry-run
// --print-sql` on the five workloads of docs/analyze.md: 0.90 to 1.04
// (it was 1.33 to 1.35 before the replay's own CPU was halved).
const ReplayOverDryRun = 0.97

// Pipeline measures prepl's own CPU per transaction on the binlog to be
// analyzed, on this machine now: step reads one transaction and renders its
// SQL as a dry run does, returning its size in bytes (io.EOF at the end).
// It times up to PipelineTxns of them in the process's CPU time (the
// garbage collector included) and returns costs with ReadTxn and ReadKiB
// of c scaled so that, at this binlog's average transaction size, they add
// up to what was measured (times ReplayOverDryRun, and slowdown on a busy
// machine). With nothing read, or no CPU clock, c is returned as it is.
func Pipeline(c analyze.Costs, step func() (int, error)) (analyze.Costs, error) {
	start := processCPU()
	var txns, bytes int
	for txns < PipelineTxns {
		n, err := step()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return c, err
		}
		txns++
		bytes += n
	}
	cpu := processCPU() - start
	if txns == 0 || cpu <= 0 {
		return c, nil
	}
	// On a busy machine the same CPU takes longer (see slowdown).
	return scaleRead(c, time.Duration(float64(cpu)*slowdown()), txns, bytes), nil
}

// scaleRead fits ReadTxn and ReadKiB to cpu spent on txns transactions of
// bytes in all, keeping their ratio (the defaults' split between a
// transaction's fixed cost and its bytes' cost).
func scaleRead(c analyze.Costs, cpu time.Duration, txns, bytes int) analyze.Costs {
	measured := ReplayOverDryRun * float64(cpu) / float64(txns)
	kib := float64(bytes) / float64(txns) / 1024
	model := float64(analyze.DefaultCosts.ReadTxn) + float64(analyze.DefaultCosts.ReadKiB)*kib
	k := measured / model
	c.ReadTxn = time.Duration(float64(analyze.DefaultCosts.ReadTxn) * k)
	c.ReadKiB = time.Duration(float64(analyze.DefaultCosts.ReadKiB) * k)
	return c
}
