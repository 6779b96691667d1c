package apply

import (
	"testing"
	"time"
)

// TestDelayDue: a transaction waits until its source commit time plus
// the delay, by an injected clock, and not past it.
func TestDelayDue(t *testing.T) {
	commit := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		delay time.Duration
		now   time.Time
		wait  bool
	}{
		{"no delay", 0, commit, false},
		{"just committed", time.Hour, commit, true},
		{"a second before due", time.Hour, commit.Add(time.Hour - time.Second), true},
		{"exactly due", time.Hour, commit.Add(time.Hour), false},
		{"past due", time.Hour, commit.Add(2 * time.Hour), false},
		{"clock behind the source", 2 * time.Second, commit.Add(-time.Minute), true},
	} {
		due, wait := delayDue(commit, c.delay, c.now)
		if wait != c.wait {
			t.Errorf("%s: wait %v, want %v", c.name, wait, c.wait)
		}
		if wait && !due.Equal(commit.Add(c.delay)) {
			t.Errorf("%s: due %v, want %v", c.name, due, commit.Add(c.delay))
		}
	}
	if _, wait := delayDue(time.Time{}, time.Hour, commit); wait {
		t.Error("a transaction without a commit time waited")
	}
}
