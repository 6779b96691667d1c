package apply

import (
	"testing"
	"time"

	"github.com/prepl/prepl/txn"
)

type silentFor time.Duration

func (s silentFor) Silence() time.Duration { return time.Duration(s) }

// TestLag: the lag is the age of the oldest transaction read and not yet
// applied (sequencer.Oldest finds it wherever it waits) and at least the
// source's silence, so it is not 0 while the source is unreachable or work
// is pending.
func TestLag(t *testing.T) {
	now := time.Now()
	ago := func(d time.Duration) *txn.Txn { return &txn.Txn{Timestamp: now.Add(-d)} }
	for _, c := range []struct {
		name   string
		oldest *txn.Txn
		silent Silent
		want   time.Duration
	}{
		{"caught up, files", nil, nil, 0},
		{"caught up, source heard on time", nil, silentFor(0), 0},
		{"nothing pending, source unheard for 40s", nil, silentFor(40 * time.Second), 40 * time.Second},
		{"work waits (target down)", ago(30 * time.Second), silentFor(0), 30 * time.Second},
		{"pending older than the silence", ago(50 * time.Second), silentFor(20 * time.Second), 50 * time.Second},
		{"silence longer than what is pending", ago(2 * time.Second), silentFor(20 * time.Second), 20 * time.Second},
		{"no source timestamp", &txn.Txn{}, nil, 0},
	} {
		if got := lag(c.oldest, c.silent, now); got != c.want {
			t.Errorf("%s: lag %s, want %s", c.name, got, c.want)
		}
	}
}
