package calibrate

import (
	"errors"
	"io"
	"math"
	"testing"
	"time"

	"github.com/prepl/prepl/analyze"
)

// The fitted reader costs add up, at the binlog's average transaction
// size, to the measured CPU per transaction times ReplayOverDryRun, and
// keep the defaults' split between per-transaction and per-KiB cost.
func TestScaleRead(t *testing.T) {
	for _, tc := range []struct {
		cpu         time.Duration
		txns, bytes int
	}{
		{time.Second, 20000, 20000 * 2240},
		{300 * time.Millisecond, 20000, 20000 * 630},
		{50 * time.Millisecond, 10, 10 * 1 << 20},
		{time.Millisecond, 1, 0},
	} {
		c := scaleRead(analyze.Costs{}, tc.cpu, tc.txns, tc.bytes)
		kib := float64(tc.bytes) / float64(tc.txns) / 1024
		got := float64(c.ReadTxn) + float64(c.ReadKiB)*kib
		want := ReplayOverDryRun * float64(tc.cpu) / float64(tc.txns)
		if math.Abs(got-want) > want*1e-3 {
			t.Errorf("%v for %d txns of %d bytes: reader costs %v + %v/KiB give %v per txn, want %v",
				tc.cpu, tc.txns, tc.bytes, c.ReadTxn, c.ReadKiB, time.Duration(got), time.Duration(want))
		}
		split := float64(c.ReadKiB) / float64(c.ReadTxn)
		dflt := float64(analyze.DefaultCosts.ReadKiB) / float64(analyze.DefaultCosts.ReadTxn)
		if math.Abs(split-dflt) > 1e-3*dflt {
			t.Errorf("%v: per-KiB/per-txn %v, want the defaults' %v", tc.cpu, split, dflt)
		}
	}
}

// Pipeline measures real work: a step that burns CPU gives a reader cost
// of at least that CPU times ReplayOverDryRun, and nothing read keeps the
// given costs.
func TestPipeline(t *testing.T) {
	in := analyze.Costs{ReadTxn: time.Nanosecond, ReadKiB: time.Nanosecond}
	c, err := Pipeline(in, func() (int, error) { return 0, io.EOF })
	if err != nil || c != in {
		t.Fatalf("nothing read: got %+v, %v; want the costs unchanged", c, err)
	}
	n := 0
	c, err = Pipeline(in, func() (int, error) {
		if n == 100 {
			return 0, io.EOF
		}
		n++
		burn(2 * time.Millisecond)
		return 1024, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The process's CPU covers at least what the steps burned; the cost
	// is that times ReplayOverDryRun (and a slowdown of at least 1).
	want := time.Duration(ReplayOverDryRun * float64(2*time.Millisecond))
	if per := c.ReadTxn + c.ReadKiB; per < want-time.Microsecond {
		t.Errorf("100 steps of 2 ms CPU each: reader cost %v per transaction of 1 KiB, want at least %v", per, want)
	}
	boom := errors.New("damaged")
	if _, err := Pipeline(in, func() (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Errorf("a read error: got %v, want it returned", err)
	}
}

// burn spends about d of the process's CPU (at most 10·d of wall time).
func burn(d time.Duration) {
	start, wall := processCPU(), time.Now()
	x := 1.0
	for processCPU()-start < d && time.Since(wall) < 10*d {
		for i := 0; i < 1000; i++ {
			x = math.Sqrt(x + float64(i))
		}
	}
	_ = x
}
