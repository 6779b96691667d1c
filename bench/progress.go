package bench

import (
	"fmt"
	"io"
	"time"
)

// progress prints a line per step of the benchmark: which run, n of
// total, elapsed time and an estimate of the time left.
type progress struct {
	w     io.Writer
	total int
	done  int
	start time.Time
	// runTime is the time spent in timed runs (restore, apply, verify),
	// the basis of the estimate: source preparation is not a run.
	runTime time.Duration
	now     func() time.Time
}

func newProgress(w io.Writer, total int) *progress {
	return &progress{w: w, total: total, start: time.Now(), now: time.Now}
}

// say prints a free-form line.
func (p *progress) say(format string, args ...any) {
	fmt.Fprintf(p.w, "bench %s  %s\n", fmtDuration(p.now().Sub(p.start)), fmt.Sprintf(format, args...))
}

// begin announces run n (1-based) of total.
func (p *progress) begin(r plannedRun, repeats int) {
	fmt.Fprintf(p.w, "bench %s  [%d/%d, ETA %s] %s, repeat %d/%d\n", fmtDuration(p.now().Sub(p.start)),
		p.done+1, p.total, eta(p.runTime, p.done, p.total), r.Cell, r.Repeat, repeats)
}

// end reports a finished run that took d in all.
func (p *progress) end(res Result, d time.Duration) {
	p.done++
	p.runTime += d
	switch {
	case res.OK():
		fmt.Fprintf(p.w, "      %.2f s, %.0f txn/s, target = source\n", res.Seconds, res.TxnPerSec())
	case res.Err != "":
		fmt.Fprintf(p.w, "      FAILED: %s\n", res.Err)
	default:
		fmt.Fprintf(p.w, "      FAILED: target differs from source\n")
	}
}

// eta estimates the time left from the average run so far; "?" before
// the first run.
func eta(spent time.Duration, done, total int) string {
	if done == 0 {
		return "?"
	}
	return fmtDuration(spent / time.Duration(done) * time.Duration(total-done))
}

// fmtDuration prints 75s as "1m15s" and 3h as "3h00m".
func fmtDuration(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	switch {
	case s >= 3600:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	case s >= 60:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%ds", s)
}
