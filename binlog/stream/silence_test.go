package stream

import (
	"testing"
	"time"
)

// TestSilenceCountsOnlyWaiting: the watchdog's quiet time grows only
// while the reader waits for the source and no event comes; a reader that
// does not read (apply blocked) is not a silent source.
func TestSilenceCountsOnlyWaiting(t *testing.T) {
	type obs struct {
		at      int // seconds
		events  uint64
		waiting bool
		want    int // quiet seconds
	}
	cases := []struct {
		name string
		obs  []obs
	}{
		{"events flowing", []obs{{1, 5, true, 0}, {2, 9, true, 0}, {3, 12, true, 0}}},
		{"silent source", []obs{{1, 5, true, 0}, {2, 5, true, 1}, {3, 5, true, 2}, {9, 5, true, 8}}},
		{"reader not reading", []obs{{1, 5, false, 0}, {2, 5, false, 0}, {60, 5, false, 0}}},
		{"reader back, source silent", []obs{{1, 5, false, 0}, {30, 5, false, 0}, {31, 5, true, 1}, {32, 5, true, 2}, {36, 5, true, 6}}},
		{"an event restarts the count", []obs{{1, 5, true, 0}, {4, 5, true, 3}, {5, 6, true, 0}, {7, 6, true, 2}}},
		{"a busy spell restarts it", []obs{{1, 5, true, 0}, {4, 5, true, 3}, {5, 5, false, 0}, {6, 5, true, 1}}},
	}
	base := time.Unix(1000, 0)
	for _, c := range cases {
		q := silence{last: 5, since: base.Add(time.Second)} // the watch started at 1s
		for i, o := range c.obs {
			got := q.observe(base.Add(time.Duration(o.at)*time.Second), o.events, o.waiting)
			if got != time.Duration(o.want)*time.Second {
				t.Errorf("%s: observation %d: quiet %s, want %ds", c.name, i, got, o.want)
			}
		}
	}
}

func TestSilenceOnlyWhenOverdue(t *testing.T) {
	s := &Reader{cfg: Config{Heartbeat: time.Second}}
	for _, c := range []struct {
		ago     time.Duration
		overdue bool
	}{{0, false}, {time.Second, false}, {1900 * time.Millisecond, false}, {3 * time.Second, true}, {time.Hour, true}} {
		s.heard.Store(time.Now().Add(-c.ago).UnixNano())
		got := s.Silence()
		if c.overdue && got < c.ago || !c.overdue && got != 0 {
			t.Errorf("heard %s ago: Silence %s, want overdue %v", c.ago, got, c.overdue)
		}
	}
}
