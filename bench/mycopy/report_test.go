package mycopy

import (
	"strings"
	"testing"
)

// The summary is over the runs that count: a failed run is neither a
// time nor a zero, and is reported as failed.
func TestReport(t *testing.T) {
	r := &Report{Results: []Result{
		{Repeat: 1, System: Prepl, Seconds: 4, CPU: 1, TargetCPU: 3},
		{Repeat: 1, System: MyDumper, Seconds: 10, CPU: 0.5, TargetCPU: 7},
		{Repeat: 2, System: MyDumper, Seconds: 12, CPU: 0.5, TargetCPU: 8},
		{Repeat: 2, System: Prepl, Err: "target differs from source"},
		{Repeat: 3, System: Prepl, Seconds: 6, CPU: 1, TargetCPU: 4},
		{Repeat: 3, System: MyDumper, Seconds: 8, CPU: 0.5, TargetCPU: 6},
	}}
	if s := r.summarize(Prepl, figures[0].of); s.Median != 5 || s.Min != 4 || s.Max != 6 || s.Runs != 2 || s.Of != 3 {
		t.Errorf("prepl seconds: %+v, want median 5 (4–6) of 2 runs that count in 3", s)
	}
	if got := r.Ratio(0); got != 0.5 {
		t.Errorf("ratio of the median seconds: %v, want 5/10", got)
	}
	if got := r.Ratio(2); got != 3.5/7 {
		t.Errorf("ratio of the target CPU: %v, want 3.5/7", got)
	}
	var b strings.Builder
	r.Markdown(&b)
	for _, want := range []string{"| seconds | 5.00 (4.00–6.00), 1 of 3 failed | 10.00 (8.00–12.00) | 0.50 |",
		"met on the median seconds (0.50)", "FAILED: target differs from source"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	none := &Report{Results: []Result{{System: Prepl, Err: "x"}, {System: MyDumper, Seconds: 1}}}
	if none.Ratio(0) != 0 || !strings.Contains(none.summarize(Prepl, figures[0].of).String(), "failed") {
		t.Errorf("no prepl run that counts: ratio %v, summary %q", none.Ratio(0), none.summarize(Prepl, figures[0].of))
	}
}
