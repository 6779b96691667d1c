package apply

import (
	"sort"
	"sync"
	"time"
)

// Gate holds admission: while it is held, the runtime feeds the sequencer
// nothing new, so no new transaction starts; what was read before still
// commits, and then the position holds still. An operator's pause and
// each throttling reason (target load, replica lag, a flag file) hold it;
// it opens when none does. It lives in the runtime, not in the
// sequencer's rules. Safe for concurrent use; the zero value is open.
type Gate struct {
	mu      sync.Mutex
	paused  bool
	pausedT time.Time
	pausedD time.Duration
	held    map[string]hold // throttling reason -> since when, why
	total   map[string]time.Duration
	changed chan struct{} // closed and replaced on every change
}

type hold struct {
	since  time.Time
	detail string
}

// GateState is a snapshot of a Gate, for /status and /metrics.
type GateState struct {
	Paused bool
	// PausedFor is the time spent paused, this run.
	PausedFor time.Duration
	// Throttled names each reason holding the gate now, with why
	// ("Threads_running=73 > 50").
	Throttled map[string]string
	// ThrottledFor is the time spent throttled by reason, this run.
	ThrottledFor map[string]time.Duration
}

// Throttling reasons.
const (
	ThrottleMaxLoad    = "max-load"
	ThrottleReplicaLag = "replica-lag"
	ThrottleFlagFile   = "flag-file"
	// ThrottleDelay holds the gate while the next transaction's source
	// commit time plus Config.Delay is still ahead (--delay, as
	// MASTER_DELAY); its detail names the GTID and the time it waits for.
	ThrottleDelay = "delay"
)

// delayDue says until when the transaction committed on the source at
// commit must wait under delay, at now: wait is false once
// commit+delay is not after now, or with no delay or no commit time.
func delayDue(commit time.Time, delay time.Duration, now time.Time) (due time.Time, wait bool) {
	if delay <= 0 || commit.IsZero() {
		return time.Time{}, false
	}
	due = commit.Add(delay)
	return due, due.After(now)
}

func (g *Gate) signal() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

// Pause holds the gate until Resume; false if it was paused already.
func (g *Gate) Pause() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused {
		return false
	}
	g.paused, g.pausedT = true, time.Now()
	g.signal()
	return true
}

// Resume ends a Pause; false if it was not paused.
func (g *Gate) Resume() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.paused {
		return false
	}
	g.paused = false
	g.pausedD += time.Since(g.pausedT)
	g.signal()
	return true
}

// Throttle holds the gate for reason (detail says why) or, with
// on false, releases it; true when that changed whether reason holds.
func (g *Gate) Throttle(reason string, on bool, detail string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	h, was := g.held[reason]
	switch {
	case on && was:
		h.detail = detail
		g.held[reason] = h
		return false
	case on:
		if g.held == nil {
			g.held = map[string]hold{}
		}
		g.held[reason] = hold{since: time.Now(), detail: detail}
	case was:
		if g.total == nil {
			g.total = map[string]time.Duration{}
		}
		g.total[reason] += time.Since(h.since)
		delete(g.held, reason)
	default:
		return false
	}
	g.signal()
	return true
}

// Held reports whether the gate is held, and a channel closed at its
// next change. A nil Gate is always open.
func (g *Gate) Held() (bool, <-chan struct{}) {
	if g == nil {
		return false, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.changed == nil {
		g.changed = make(chan struct{})
	}
	return g.paused || len(g.held) > 0, g.changed
}

// State is a snapshot of the gate.
func (g *Gate) State() GateState {
	st := GateState{Throttled: map[string]string{}, ThrottledFor: map[string]time.Duration{}}
	if g == nil {
		return st
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	st.Paused, st.PausedFor = g.paused, g.pausedD
	if g.paused {
		st.PausedFor += now.Sub(g.pausedT)
	}
	for r, d := range g.total {
		st.ThrottledFor[r] = d
	}
	for r, h := range g.held {
		st.Throttled[r] = h.detail
		st.ThrottledFor[r] += now.Sub(h.since)
	}
	return st
}

// Reasons lists what holds the gate now, sorted ("paused" first).
func (st GateState) Reasons() []string {
	var out []string
	for r := range st.Throttled {
		out = append(out, r)
	}
	sort.Strings(out)
	if st.Paused {
		out = append([]string{"paused"}, out...)
	}
	return out
}
