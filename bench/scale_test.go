package bench

import (
	"strings"
	"testing"
	"time"
)

func TestScaleRunTenths(t *testing.T) {
	// 1000 bytes: the position crosses 100 bytes a second, then stalls,
	// then crosses the last 500 at 50 a second.
	r := &ScaleRun{BinlogBytes: 1000}
	for i := 1; i <= 5; i++ {
		r.Samples = append(r.Samples, ScaleSample{At: time.Duration(i) * time.Second, Position: int64(i) * 100, RSS: int64(i)})
	}
	r.Samples = append(r.Samples, ScaleSample{At: 7 * time.Second, Position: 700, RSS: 9},
		ScaleSample{At: 13 * time.Second, Position: 1000})
	got := r.Tenths()
	// Crossing times interpolated: 600 at 6 s, 700 at 7 s, 800 at 9 s.
	want := []float64{100, 100, 100, 100, 100, 100, 100, 50, 50, 50}
	if len(got) != len(want) {
		t.Fatalf("tenths %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("tenth %d: %.1f B/s, want %.1f", i+1, got[i], want[i])
		}
	}
	// The files end with a rotate event after the last transaction: the
	// binlog applied ends at the last stored position.
	r.BinlogBytes = 1040
	if n := len(r.Tenths()); n != 10 {
		t.Errorf("with a rotate event at the end: %d tenths, want 10", n)
	}
	// A run that failed short of the end has fewer tenths.
	r.ExitCode = 2
	if n := len(r.Tenths()); n != 9 {
		t.Errorf("failed run: %d tenths, want 9", n)
	}
	if r.MaxRSS() != 9 {
		t.Errorf("MaxRSS %d, want 9", r.MaxRSS())
	}
	if (&ScaleRun{}).Tenths() != nil {
		t.Error("tenths of nothing")
	}
}

func TestScaleTargets(t *testing.T) {
	steady := &ScaleRun{BinlogBytes: 10 << 30}
	for i := 1; i <= 10; i++ {
		steady.Samples = append(steady.Samples, ScaleSample{At: time.Duration(i) * time.Second, Position: int64(i) << 30, RSS: 150 << 20})
	}
	res := func(threads int, secs ...float64) []Result {
		var out []Result
		for i, s := range secs {
			out = append(out, Result{Cell: Cell{"update-index", "B", PreplReplay, "writeset", threads}, Repeat: i + 1, Seconds: s, Txns: 10, Verified: true})
		}
		return out
	}
	workers := &Report{Threads: []int{0, 16, 256}, Results: append(append(res(0, 1.0, 1.1, 1.2), res(16, 0.8, 0.9, 1.0)...), res(256, 0.95, 0.95, 0.95)...)}
	r := &ScaleReport{Volume: steady, BigTxn: &ScaleRun{BinlogBytes: 1 << 30, ExitCode: 2, Rows: 4e6}, Workers: workers}
	got := r.targets()
	want := []string{"met", "met", "met", "met"}
	if len(got) != len(want) {
		t.Fatalf("targets %+v", got)
	}
	for i, w := range want {
		if got[i].verdict != w {
			t.Errorf("target %q: %s (%s), want %s", got[i].target, got[i].verdict, got[i].measured, w)
		}
	}

	// Memory over the cap, the last tenth 20% slower, 256 workers slower
	// than the best count's slowest run, the big transaction held whole.
	steady.Samples[9].At = steady.Samples[8].At + 1250*time.Millisecond
	steady.Samples[3].RSS = 250 << 20
	workers.Results = append(res(16, 0.8, 0.9, 1.0), res(256, 1.5, 1.5, 1.5)...)
	r.BigTxn = &ScaleRun{BinlogBytes: 1 << 30, Samples: []ScaleSample{{RSS: 3 << 30}}}
	for _, x := range r.targets() {
		if x.verdict != "NOT met" {
			t.Errorf("target %q: %s (%s), want NOT met", x.target, x.verdict, x.measured)
		}
	}
	var b strings.Builder
	r.Markdown(&b)
	for _, s := range []string{"| 256 workers: correct, no slower than the best count |", "RSS at most **3072 MiB**"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("results.md lacks %q:\n%s", s, b.String())
		}
	}
}

func TestArgsText(t *testing.T) {
	got := argsText([]string{"replay", "--target", "mysql://root@127.0.0.1:3307", "--workers", "4", "/tmp/a/binlog.000002", "/tmp/a/binlog.000003"})
	if want := "replay --target mysql://root@TARGET --workers 4 FILES (2)"; got != want {
		t.Errorf("argsText = %q, want %q", got, want)
	}
}

func TestCounters(t *testing.T) {
	c := Counters{PoolReads: 300, LogFsyncs: 110, BinlogGroupCommits: 60}.sub(Counters{PoolReads: 100, LogFsyncs: 10, BinlogGroupCommits: 10})
	if got, want := c.perTxn(100), "1.00 InnoDB fsyncs, 0.50 binlog group commits, 2.00 page reads"; got != want {
		t.Errorf("perTxn = %q, want %q", got, want)
	}
	// An I/O-bound config: what the run left to purge.
	c.PurgeReads, c.PurgeMillis = 250, 1500
	if got, want := c.perTxn(100), "1.00 InnoDB fsyncs, 0.50 binlog group commits, 2.00 page reads; then purge: 2.50 page reads, 1.50 s"; got != want {
		t.Errorf("perTxn = %q, want %q", got, want)
	}
}
