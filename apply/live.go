package apply

import (
	"sync/atomic"
	"time"
)

// Live publishes a run's statistics while it runs, for /status and
// /metrics: the scheduler stores a fresh snapshot a few times a second and
// at the end, readers load it without locking the engine.
type Live struct{ p atomic.Pointer[Stats] }

// Stats returns the latest snapshot; false before the run has started.
func (l *Live) Stats() (Stats, bool) {
	s := l.p.Load()
	if s == nil {
		return Stats{}, false
	}
	return *s, true
}

func (l *Live) store(s Stats) {
	if l != nil {
		l.p.Store(&s)
	}
}

// liveEvery is how often the scheduler refreshes Config.Live.
const liveEvery = 250 * time.Millisecond

// WorkerStat is one worker connection's state.
type WorkerStat struct {
	ID    int
	State string        // idle, applying, waiting-commit, committing, reconnecting
	Txn   string        // GTID or file:pos of its current transaction ("" when idle)
	Busy  time.Duration // time spent applying and committing, whole run
}
