package metrics

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/position"
)

func sampleStats() apply.Stats {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	hist := make([]uint64, len(apply.UnitBuckets)+1)
	hist[0], hist[2], hist[len(hist)-1] = 5, 2, 1
	return apply.Stats{
		Txns: 120, Skipped: 3, Rows: 400, Bytes: 9000, Retries: 7, Read: 125,
		RetriesBy: map[string]uint64{"yield": 5, "deadlock": 2}, Yields: map[string]uint64{"lock-wait": 5}, Concurrency: 3,
		Serialized: map[depend.Reason]uint64{depend.ReasonDDL: 2, depend.ReasonKeyConflict: 9, depend.ReasonNone: 100},
		Elapsed:    10 * time.Second,
		Last:       position.Checkpoint{File: "mariadb-bin.000007", Pos: 4000, LastGTID: "0-1-120", GTIDPos: "0-1-120,1-1-5", SourceTS: ts, Applied: 1120},
		ReadPos:    position.Checkpoint{File: "mariadb-bin.000008", Pos: 500, LastGTID: "0-1-125"},
		Lag:        1500 * time.Millisecond, InFlight: 5, QueueBytes: 2048, WindowBytes: 1 << 20,
		Units: 8, UnitHist: hist,
		Workers: []apply.WorkerStat{{ID: 1, State: "applying", Txn: "0-1-121", Busy: 3 * time.Second},
			{ID: 2, State: "idle", Busy: 2 * time.Second}},
		Reconnects: 1, Errors: map[string]uint64{"conflict": 4, "retry": 3}, LastError: "deadlock",
		CompactedRows: 11, CompactFallbacks: 1, RowEvents: 23,
	}
}

func gather(t *testing.T, m *Monitor) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// value returns the value of the series of family name whose labels
// include want (name=value pairs).
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("metric %s missing", name)
	}
next:
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(want); i += 2 {
			if got[want[i]] != want[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("metric %s has no series with labels %v", name, want)
	return 0
}

func TestCollector(t *testing.T) {
	s := sampleStats()
	m := New(func() (apply.Stats, bool) { return s, true }, Info{Command: "replicate", Version: "test", Source: "mysql://repl@src:3306",
		Target: "mysql://root@tgt:3306", Channel: "default", Mode: "writeset", Workers: 2},
		func(apply.Stats) Extra {
			return Extra{State: "running", CaughtUp: false, BehindBytes: 777, SourceReconnects: 2}
		})
	fams := gather(t, m)
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"prepl_transactions_applied_total", nil, 120},
		{"prepl_transactions_skipped_total", nil, 3},
		{"prepl_transactions_read_total", nil, 125},
		{"prepl_rows_applied_total", nil, 400},
		{"prepl_bytes_applied_total", nil, 9000},
		{"prepl_lag_seconds", nil, 1.5},
		{"prepl_source_behind_bytes", nil, 777},
		{"prepl_queue_bytes", nil, 2048},
		{"prepl_window_bytes", nil, 1 << 20},
		{"prepl_in_flight_transactions", nil, 5},
		{"prepl_read_position_bytes", []string{"file", "mariadb-bin.000008"}, 500},
		{"prepl_applied_position_bytes", []string{"file", "mariadb-bin.000007"}, 4000},
		{"prepl_read_file_number", nil, 8},
		{"prepl_applied_file_number", nil, 7},
		{"prepl_applied_source_timestamp_seconds", nil, float64(s.Last.SourceTS.Unix())},
		{"prepl_worker_busy_seconds_total", []string{"worker", "1"}, 3},
		{"prepl_worker_busy_seconds_total", []string{"worker", "2"}, 2},
		{"prepl_workers", []string{"state", "applying"}, 1},
		{"prepl_workers", []string{"state", "idle"}, 1},
		{"prepl_workers", []string{"state", "reconnecting"}, 0},
		{"prepl_retries_total", []string{"cause", "yield"}, 5},
		{"prepl_retries_total", []string{"cause", "deadlock"}, 2},
		{"prepl_retries_total", []string{"cause", "connection"}, 0},
		{"prepl_yields_total", []string{"cause", "lock-wait"}, 5},
		{"prepl_yields_total", []string{"cause", "head-stall"}, 0},
		{"prepl_concurrency", nil, 3},
		{"prepl_serialized_total", []string{"reason", "ddl"}, 2},
		{"prepl_serialized_total", []string{"reason", string(depend.ReasonKeyConflict)}, 9},
		{"prepl_reconnects_total", []string{"peer", "target"}, 1},
		{"prepl_reconnects_total", []string{"peer", "source"}, 2},
		{"prepl_errors_total", []string{"class", "conflict"}, 4},
		{"prepl_errors_total", []string{"class", "fatal"}, 0},
		{"prepl_caught_up", nil, 0},
		{"prepl_info", []string{"command", "replicate", "source", "mysql://repl@src:3306"}, 1},
		{"prepl_commit_unit_transactions", nil, 8},
		{"prepl_compacted_rows_total", nil, 11},
		{"prepl_compact_fallbacks_total", nil, 1},
		{"prepl_row_events_rows_total", nil, 23},
	}
	for _, c := range checks {
		if got := value(t, fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	h := fams["prepl_commit_unit_transactions"].GetMetric()[0].GetHistogram()
	cum := map[float64]uint64{}
	for _, b := range h.GetBucket() {
		cum[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	if cum[1] != 5 || cum[2] != 5 || cum[4] != 7 || cum[256] != 7 || h.GetSampleCount() != 8 {
		t.Errorf("commit unit histogram buckets %v count %d: want 1:5 2:5 4:7 256:7 count 8", cum, h.GetSampleCount())
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if fams[name] == nil {
			t.Errorf("%s missing: the Go and process collectors are not registered", name)
		}
	}
}

func TestCollectorBeforeFirstSnapshot(t *testing.T) {
	m := New(func() (apply.Stats, bool) { return apply.Stats{}, false }, Info{Command: "replay"},
		func(apply.Stats) Extra { t.Error("extra asked before the first snapshot"); return Extra{} })
	fams := gather(t, m)
	if v := value(t, fams, "prepl_transactions_applied_total"); v != 0 {
		t.Errorf("applied before start = %v", v)
	}
	if _, ok := fams["prepl_source_behind_bytes"]; ok {
		t.Error("source_behind_bytes exported while unknown")
	}
	st := m.Status()
	if st.State != "starting" || st.WorkerStates == nil {
		t.Errorf("status before start: state %q workers %v", st.State, st.WorkerStates)
	}
}

func TestRates(t *testing.T) {
	s := sampleStats()
	m := New(func() (apply.Stats, bool) { return s, true }, Info{}, nil)
	t0 := time.Now()
	for i := 0; i <= 30; i++ {
		m.Observe(t0.Add(time.Duration(i)*time.Second), apply.Stats{Txns: uint64(100 * i), Rows: uint64(300 * i), Bytes: uint64(1000 * i)})
	}
	r := m.Rates()
	if r.Transactions != 100 || r.Rows != 300 || r.Bytes != 1000 {
		t.Errorf("rates %+v, want 100 txn/s, 300 rows/s, 1000 B/s", r)
	}
	if r.RunTransactions != 12 {
		t.Errorf("run rate %v, want 12 (120 in 10 s)", r.RunTransactions)
	}
	if n := len(m.window); n > int(RateWindow/time.Second)+2 {
		t.Errorf("window keeps %d samples: it should hold about %s", n, RateWindow)
	}
}

func TestServeStatusAndMetrics(t *testing.T) {
	s := sampleStats()
	m := New(func() (apply.Stats, bool) { return s, true }, Info{Command: "replicate", Source: "mysql://repl@src:3306", Target: "mysql://root@tgt:3306", Workers: 2},
		func(got apply.Stats) Extra {
			if got.Txns != s.Txns {
				t.Errorf("extra asked of another snapshot")
			}
			return Extra{State: "running", CaughtUp: true, BehindBytes: -1,
				SourceEnd: &SourceEnd{File: "mariadb-bin.000008", Pos: 500, GTIDPos: "0-1-125"}}
		})
	srv, err := Listen("127.0.0.1:0", m.Handler())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())

	st, err := Fetch(context.Background(), srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if st.Command != "replicate" || st.State != "running" || !st.CaughtUp || st.Transactions.Applied != 120 ||
		st.Applied.File != "mariadb-bin.000007" || st.Applied.Total != 1120 || st.Read.Pos != 500 || st.LagSeconds != 1.5 ||
		len(st.WorkerStates) != 2 || st.WorkerStates[0].Transaction != "0-1-121" || st.LastError != "deadlock" || st.BehindBytes != nil ||
		st.Applied.ByDomain["1"] != "1-1-5" || st.SourceEnd == nil || st.Reconnects["target"] != 1 {
		t.Errorf("status document: %+v", st)
	}

	resp, err := http.Get("http://" + srv.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "prepl_transactions_applied_total 120") {
		t.Errorf("/metrics lacks the applied count:\n%s", body)
	}
	if _, err := Listen(srv.Addr(), m.Handler()); err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Errorf("second listener on %s: %v, want an error naming --metrics-addr", srv.Addr(), err)
	}
}
