// Package metrics serves a run's statistics over HTTP: Prometheus metrics on
// /metrics and a JSON status document on /status (what SHOW SLAVE STATUS
// tells, for prepl). Both read the engine's latest apply.Stats snapshot when
// asked, so the engine itself has no Prometheus code.
package metrics

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/prepl/prepl/apply"
)

// Info describes a run; it does not change while the run goes. URLs carry
// no password.
type Info struct {
	Command string `json:"command"`
	Version string `json:"version"`
	Source  string `json:"source"`
	Target  string `json:"target"`
	Channel string `json:"channel"`
	Mode    string `json:"mode"`
	Workers int    `json:"workers"`
}

// SourceEnd is how far the source has written, as last seen by the
// command (polled from a live source, or the end of the files replayed).
type SourceEnd struct {
	File      string    `json:"file"`
	Pos       uint32    `json:"pos"`
	GTIDPos   string    `json:"gtid_position,omitempty"`
	CheckedAt time.Time `json:"checked_at"`
	Error     string    `json:"error,omitempty"` // why the last poll failed
}

// Extra is what the command knows beyond the engine's statistics.
type Extra struct {
	State     string // starting, running, stopping, done, failed
	CaughtUp  bool
	SourceEnd *SourceEnd
	// BehindBytes is the source's end minus the read position; -1 when
	// unknown (different files of unknown sizes).
	BehindBytes      int64
	SourceReconnects uint64
	// Gate is the state of pause and throttling (apply.Config.Gate).
	Gate apply.GateState
	// SkipRequested counts transactions left out as prepl skip asked.
	SkipRequested uint64
	// Relay is replicate's relay log (--relay-dir); nil without one.
	Relay *Relay
}

// Relay is the state of a relay log: its files' bytes and count, the age
// of the oldest file it holds (its transactions not all applied), and
// whether reading from the source waits at --relay-max-size or
// --relay-max-age.
type Relay struct {
	Dir           string  `json:"dir"`
	Bytes         int64   `json:"bytes"`
	Files         int     `json:"files"`
	OldestSeconds float64 `json:"oldest_file_age_seconds"`
	Full          bool    `json:"full"`
}

// Role is the process's part on its channel (docs/standby.md).
type Role struct {
	Standby     bool      // waiting for the channel's active prepl to go
	ActiveSince time.Time // when this process became the channel's active (zero: not yet)
	Epoch       uint64    // the channel's epoch this process holds (0: none)
}

// Monitor turns snapshots into metrics and status documents.
type Monitor struct {
	role    func() Role // nil: the target keeps no roles (PostgreSQL)
	stats   func() (apply.Stats, bool)
	extra   func(apply.Stats) Extra
	info    Info
	reg     *prometheus.Registry
	started time.Time

	mu     sync.Mutex
	window []sample // the last RateWindow of observations, oldest first
}

// RateWindow is the span over which Rates are measured.
const RateWindow = 10 * time.Second

type sample struct {
	at                time.Time
	txns, rows, bytes uint64
}

// New makes a Monitor over stats (usually (*apply.Live).Stats) with its
// own Prometheus registry, holding prepl's metrics and the Go and process
// collectors. extra (nil: nothing) tells what the command knows of a
// snapshot; it is called with the same snapshot a document or scrape
// shows, so the two always agree.
func New(stats func() (apply.Stats, bool), info Info, extra func(apply.Stats) Extra) *Monitor {
	m := &Monitor{stats: stats, extra: extra, info: info, reg: prometheus.NewRegistry(), started: time.Now()}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&collector{m: m})
	return m
}

// SetRole tells the monitor the process's role on its channel; call it
// before serving.
func (m *Monitor) SetRole(role func() Role) { m.role = role }

// Registry is the monitor's Prometheus registry.
func (m *Monitor) Registry() *prometheus.Registry { return m.reg }

// snapshot is the latest statistics with what the command knows of them.
func (m *Monitor) snapshot() (apply.Stats, Extra, bool) {
	s, ok := m.stats()
	if !ok {
		return apply.Stats{}, Extra{State: "starting", BehindBytes: -1}, false
	}
	x := Extra{State: "running", BehindBytes: -1}
	if m.extra != nil {
		x = m.extra(s)
	}
	return s, x, true
}

// Observe feeds a snapshot to the rate window; the command calls it
// regularly (every second or so).
func (m *Monitor) Observe(now time.Time, s apply.Stats) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.window = append(m.window, sample{at: now, txns: s.Txns, rows: s.Rows, bytes: s.Bytes})
	cut := 0
	for cut < len(m.window)-2 && now.Sub(m.window[cut+1].at) >= RateWindow {
		cut++
	}
	m.window = m.window[cut:]
}

// Rates of applying, per second.
type Rates struct {
	// Over the last RateWindow (or since the start, if shorter).
	Transactions float64 `json:"transactions_per_second"`
	Rows         float64 `json:"rows_per_second"`
	Bytes        float64 `json:"bytes_per_second"`
	// Over the whole run.
	RunTransactions float64 `json:"run_transactions_per_second"`
}

// Rates measures the rates of the observations so far.
func (m *Monitor) Rates() Rates {
	var r Rates
	s, ok := m.stats()
	if ok {
		r.RunTransactions = s.Rate()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.window) < 2 {
		r.Transactions = r.RunTransactions
		return r
	}
	a, b := m.window[0], m.window[len(m.window)-1]
	dt := b.at.Sub(a.at).Seconds()
	if dt <= 0 {
		return r
	}
	r.Transactions = float64(b.txns-a.txns) / dt
	r.Rows = float64(b.rows-a.rows) / dt
	r.Bytes = float64(b.bytes-a.bytes) / dt
	return r
}

// FileNumber is the numeric suffix of a binlog file name (binlog.000042 is
// 42), or -1.
func FileNumber(file string) int64 {
	i := strings.LastIndexByte(file, '.')
	if i < 0 {
		return -1
	}
	n, err := strconv.ParseInt(file[i+1:], 10, 64)
	if err != nil {
		return -1
	}
	return n
}
