package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v2"

	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/redact"
)

// Status is the /status document.
type Status struct {
	Info
	State string `json:"state"` // standby, starting, running, stopping, done, failed
	// Standby: waiting for the channel's active prepl to go (--standby);
	// ActiveSince: when this process became the active; ChannelEpoch: the
	// epoch it claimed (docs/standby.md).
	Standby        bool       `json:"standby"`
	ActiveSince    *time.Time `json:"active_since,omitempty"`
	ChannelEpoch   uint64     `json:"channel_epoch,omitempty"`
	StartedAt      time.Time  `json:"started_at"`
	ElapsedSeconds float64    `json:"elapsed_seconds"`
	CaughtUp       bool       `json:"caught_up"`
	LagSeconds     float64    `json:"lag_seconds"`
	BehindBytes    *int64     `json:"behind_bytes,omitempty"` // source end minus read position
	Read           Position   `json:"read"`
	Applied        Position   `json:"applied"`
	SourceEnd      *SourceEnd `json:"source_end,omitempty"`
	InFlight       int        `json:"in_flight"`
	Concurrency    int        `json:"concurrency"` // units allowed in flight now (at most Info.Workers)
	QueueBytes     int        `json:"queue_bytes"`
	WindowBytes    int        `json:"window_bytes"`
	Rates          Rates      `json:"rates"`

	Transactions Counts            `json:"transactions"`
	Rows         uint64            `json:"rows_applied"`
	Bytes        uint64            `json:"bytes_applied"`
	Reconnects   map[string]uint64 `json:"reconnects"`
	Serialized   map[string]uint64 `json:"serialized"`
	Errors       map[string]uint64 `json:"errors"`
	Yields       map[string]uint64 `json:"yields"`     // units rolled back for an earlier one, by cause
	RetriesBy    map[string]uint64 `json:"retries_by"` // transactions.retries by cause
	LastError    string            `json:"last_error"`
	CommitUnits  uint64            `json:"commit_units"`
	WorkerStates []Worker          `json:"worker_states"` // one per worker (Info.Workers is how many)
	// Paused and Throttled say what holds new work now (Throttled: reason
	// -> why); the seconds are the time spent so, this run.
	Paused           bool               `json:"paused"`
	PausedSeconds    float64            `json:"paused_seconds"`
	Throttled        map[string]string  `json:"throttled"`
	ThrottledSeconds map[string]float64 `json:"throttled_seconds"`
	// Relay is replicate's relay log (--relay-dir).
	Relay *Relay `json:"relay,omitempty"`
}

// Position is a point in the source's binlog.
type Position struct {
	File       string     `json:"file"`
	Pos        uint32     `json:"pos"`
	LastGTID   string     `json:"last_gtid,omitempty"`
	SourceTime *time.Time `json:"source_time,omitempty"`
	// Applied only: the GTID position (MariaDB gtid_slave_pos form or a
	// MySQL GTID set), per MariaDB domain too, and the transactions applied
	// on this channel over all runs.
	GTIDPosition string            `json:"gtid_position,omitempty"`
	ByDomain     map[string]string `json:"gtid_by_domain,omitempty"`
	Total        uint64            `json:"total_applied,omitempty"`
}

// Counts of source transactions in this process.
type Counts struct {
	Applied uint64 `json:"applied"`
	Skipped uint64 `json:"skipped"`
	Read    uint64 `json:"read"`
	Retries uint64 `json:"retries"`
	// SkipRequested: skipped because prepl skip asked (in Skipped too).
	SkipRequested uint64 `json:"skip_requested"`
}

// Worker is one worker connection.
type Worker struct {
	ID          int     `json:"id"`
	State       string  `json:"state"`
	Transaction string  `json:"transaction,omitempty"`
	BusySeconds float64 `json:"busy_seconds"`
}

// Status builds the status document from the latest snapshot.
func (m *Monitor) Status() Status {
	s, x, ok := m.snapshot()
	st := Status{Info: m.info, State: x.State, StartedAt: m.started.UTC(), CaughtUp: x.CaughtUp,
		SourceEnd: x.SourceEnd, Rates: m.Rates(), Paused: x.Gate.Paused, PausedSeconds: x.Gate.PausedFor.Seconds(),
		Throttled: map[string]string{}, ThrottledSeconds: map[string]float64{},
		Reconnects: map[string]uint64{"source": x.SourceReconnects}, Serialized: map[string]uint64{}, Errors: map[string]uint64{},
		Relay: x.Relay}
	for r, why := range x.Gate.Throttled {
		st.Throttled[r] = why
	}
	for r, d := range x.Gate.ThrottledFor {
		st.ThrottledSeconds[r] = d.Seconds()
	}
	if x.BehindBytes >= 0 {
		b := x.BehindBytes
		st.BehindBytes = &b
	}
	if m.role != nil {
		r := m.role()
		st.Standby, st.ChannelEpoch = r.Standby, r.Epoch
		if !r.ActiveSince.IsZero() {
			t := r.ActiveSince.UTC()
			st.ActiveSince = &t
		}
		if r.Standby {
			st.State = "standby"
		}
	}
	if !ok {
		st.ElapsedSeconds = time.Since(m.started).Seconds()
		st.WorkerStates = []Worker{}
		return st
	}
	st.ElapsedSeconds = s.Elapsed.Seconds()
	st.LagSeconds = s.Lag.Seconds()
	st.Read = Position{File: s.ReadPos.File, Pos: s.ReadPos.Pos, LastGTID: s.ReadPos.LastGTID, SourceTime: timePtr(s.ReadPos)}
	st.Applied = Position{File: s.Last.File, Pos: s.Last.Pos, LastGTID: s.Last.LastGTID, SourceTime: timePtr(s.Last),
		GTIDPosition: s.Last.GTIDPos, ByDomain: byDomain(s.Last.GTIDPos), Total: s.Last.Applied}
	st.InFlight, st.QueueBytes, st.WindowBytes = s.InFlight, s.QueueBytes, s.WindowBytes
	st.Concurrency = s.Concurrency
	st.Yields, st.RetriesBy = maps.Clone(s.Yields), maps.Clone(s.RetriesBy)
	st.Transactions = Counts{Applied: s.Txns, Skipped: s.Skipped, Read: s.Read, Retries: s.Retries, SkipRequested: x.SkipRequested}
	st.Rows, st.Bytes = s.Rows, s.Bytes
	st.Reconnects["target"] = s.Reconnects
	for r, n := range s.Serialized {
		if r != "" {
			st.Serialized[string(r)] = n
		}
	}
	for c, n := range s.Errors {
		st.Errors[c] = n
	}
	st.LastError = redact.String(s.LastError)
	st.CommitUnits = s.Units
	st.WorkerStates = make([]Worker, 0, len(s.Workers))
	for _, w := range s.Workers {
		st.WorkerStates = append(st.WorkerStates, Worker{ID: w.ID, State: w.State, Transaction: w.Txn, BusySeconds: w.Busy.Seconds()})
	}
	return st
}

func timePtr(p position.Checkpoint) *time.Time {
	if p.SourceTS.IsZero() {
		return nil
	}
	t := p.SourceTS.UTC()
	return &t
}

// byDomain splits a MariaDB GTID position ("0-1-100,1-2-5") by domain; nil
// for a MySQL GTID set.
func byDomain(pos string) map[string]string {
	if pos == "" || strings.Contains(pos, ":") {
		return nil
	}
	out := map[string]string{}
	for _, g := range strings.Split(pos, ",") {
		g = strings.TrimSpace(g)
		if d, _, ok := strings.Cut(g, "-"); ok {
			out[d] = g
		}
	}
	return out
}

// Handler serves /metrics (Prometheus text format) and /status (JSON).
func (m *Monitor) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(m.Status())
	})
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "prepl %s %s\n/metrics  Prometheus metrics\n/status   JSON status\n", m.info.Version, m.info.Command)
	})
	return mux
}

// Server is the HTTP server of /metrics and /status.
type Server struct {
	ln     net.Listener
	srv    *http.Server
	done   chan error
	scheme string
}

// Listen binds addr (HOST:PORT; port 0 picks a free one) and serves h
// over plain HTTP.
func Listen(addr string, h http.Handler) (*Server, error) {
	return ListenWeb(addr, h, "", nil)
}

// ErrWebConfig marks a web configuration file that cannot be used.
var ErrWebConfig = errors.New("bad web configuration file")

// ListenWeb binds addr and serves h with the Prometheus exporter-toolkit's
// web configuration file webConfig (TLS, client certificates, basic auth
// with bcrypt hashes; the same file as mysqld_exporter's --web.config.file).
// "" serves plain HTTP with no authentication. The file is checked before
// anything is served, and read again on each new connection, as the
// toolkit does.
func ListenWeb(addr string, h http.Handler, webConfig string, log *slog.Logger) (*Server, error) {
	s := &Server{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, done: make(chan error, 1), scheme: "http"}
	if webConfig != "" {
		if err := web.Validate(webConfig); err != nil {
			return nil, fmt.Errorf("--web-config %s: %w: %w", webConfig, ErrWebConfig, err)
		}
		tlsOn, err := webTLS(webConfig)
		if err != nil {
			return nil, fmt.Errorf("--web-config %s: %w: %w", webConfig, ErrWebConfig, err)
		}
		if tlsOn {
			s.scheme = "https"
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics address %s: %w (choose another --metrics-addr, or stop what listens there)", addr, err)
	}
	s.ln = ln
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	flags := &web.FlagConfig{WebConfigFile: &webConfig, WebSystemdSocket: new(bool), WebListenAddresses: &[]string{addr}}
	go func() { s.done <- web.Serve(ln, s.srv, flags, log) }()
	return s, nil
}

// webTLS tells whether a web configuration file turns TLS on.
func webTLS(path string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	var c struct {
		TLS map[string]any `yaml:"tls_server_config"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		return false, err
	}
	return c.TLS["cert_file"] != nil || c.TLS["cert"] != nil, nil
}

// URL is the server's base URL: http:// or https:// and the address bound.
func (s *Server) URL() string { return s.scheme + "://" + s.Addr() }

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server, letting requests in progress finish until ctx ends.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// Fetch reads the /status document of the prepl serving at addr.
func Fetch(ctx context.Context, addr string) (Status, error) {
	var st Status
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/status", nil)
	if err != nil {
		return st, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /status: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("GET /status: not a prepl status document: %w", err)
	}
	return st, nil
}
