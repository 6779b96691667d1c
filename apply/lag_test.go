package apply

import (
	"testing"
	"time"

	"github.com/prepl/prepl/txn"
)

type silentFor time.Duration

func (s silentFor) Silence() time.Duration { return time.Duration(s) }

// TestLag: the lag is the age of the oldest transaction read and not yet
// applied, wherever it waits, and at least the source's silence, so it is
// not 0 while the source is unreachable or work is pending.
func TestLag(t *testing.T) {
	ago := func(d time.Duration) *txn.Txn { return &txn.Txn{Timestamp: time.Now().Add(-d)} }
	cases := []struct {
		name     string
		admitted []*txn.Txn // first member of each admitted unit
		forming  []*txn.Txn
		carry    *txn.Txn
		silent   Silent
		want     time.Duration
	}{
		{"caught up, files", nil, nil, nil, nil, 0},
		{"caught up, source heard on time", nil, nil, nil, silentFor(0), 0},
		{"nothing pending, source unheard for 40s", nil, nil, nil, silentFor(40 * time.Second), 40 * time.Second},
		{"admitted units wait (target down)", []*txn.Txn{ago(30 * time.Second), ago(time.Second)}, []*txn.Txn{ago(0)}, nil, silentFor(0), 30 * time.Second},
		{"a unit being formed", nil, []*txn.Txn{ago(12 * time.Second), ago(3 * time.Second)}, nil, nil, 12 * time.Second},
		{"a carried transaction", nil, nil, ago(7 * time.Second), nil, 7 * time.Second},
		{"pending older than the silence", []*txn.Txn{ago(50 * time.Second)}, nil, nil, silentFor(20 * time.Second), 50 * time.Second},
		{"silence longer than what is pending", []*txn.Txn{ago(2 * time.Second)}, nil, nil, silentFor(20 * time.Second), 20 * time.Second},
		{"no source timestamp", []*txn.Txn{{}}, nil, nil, nil, 0},
	}
	for _, c := range cases {
		e := &engine{former: &former{carry: c.carry}, silent: c.silent}
		e.former.cur.txs = c.forming
		for _, tx := range c.admitted {
			e.admittedQ = append(e.admittedQ, &entry{u: unit{txs: []*txn.Txn{tx}}})
		}
		got := e.lag()
		// The clock moves while the case runs: allow a second over.
		if got < c.want || got > c.want+time.Second {
			t.Errorf("%s: lag %s, want %s", c.name, got, c.want)
		}
	}
}
