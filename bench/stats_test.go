package bench

import (
	"math"
	"reflect"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{1, 1, 9}, 1},
		{[]float64{10, 2}, 6},
	} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("median of nothing is not NaN")
	}
	xs := []float64{3, 1, 2}
	Median(xs)
	if xs[0] != 3 {
		t.Error("median sorted its argument in place")
	}
}

func TestSummarize(t *testing.T) {
	a := Cell{Workload: "oltp", Config: "A", System: MariaDB, Mode: "optimistic", Threads: 4}
	b := Cell{Workload: "oltp", Config: "A", System: PreplReplicate, Mode: "writeset", Threads: 4}
	ok := func(c Cell, s float64, rep int) Result {
		return Result{Cell: c, Repeat: rep, Seconds: s, Txns: 100, Verified: true}
	}
	got := summarize([]Result{
		ok(a, 3, 1), ok(a, 1, 2), ok(a, 2, 3),
		ok(b, 5, 1), {Cell: b, Repeat: 2, Seconds: 0.5, Txns: 100, Verified: false}, {Cell: b, Repeat: 3, Txns: 100, Err: "exit 1"},
	})
	cases := []struct {
		cell Cell
		want Summary
		ok   bool
	}{
		{a, Summary{Median: 2, Min: 1, Max: 3, Runs: 3, Txns: 100, ByRepeat: map[int]float64{1: 3, 2: 1, 3: 2}}, true},
		// A fast run whose target differs is a failure, never a time.
		{b, Summary{Median: 5, Min: 5, Max: 5, Runs: 1, Failed: 2, Txns: 100, ByRepeat: map[int]float64{1: 5}}, false},
	}
	for _, c := range cases {
		if !reflect.DeepEqual(got[c.cell], c.want) {
			t.Errorf("%s: got %+v, want %+v", c.cell, got[c.cell], c.want)
		}
		if got[c.cell].OK() != c.ok {
			t.Errorf("%s: OK() = %v, want %v", c.cell, got[c.cell].OK(), c.ok)
		}
	}
	if r := got[a].TxnPerSec(); r != 50 {
		t.Errorf("txn/s = %v, want 50", r)
	}
}
