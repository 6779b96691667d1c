package run

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/mysql"
)

// GateOptions hold new work (pause, throttling), as gh-ost names its
// flags. They make one apply.Gate that the runtime consults before feeding
// the sequencer: what is in flight commits, nothing new starts.
type GateOptions struct {
	MaxLoad      string // --max-load: 'Threads_running=50[,VAR=N...]'
	CriticalLoad string // --critical-load, same form
	MaxLagMillis int
	Replicas     []string // --throttle-replica URLs, with the target's secrets
	FlagFile     string
	CheckEvery   time.Duration
}

// loadLimit is one VAR=N of --max-load or --critical-load.
type loadLimit struct {
	name  string
	limit int64
}

func parseLoad(flagName, s string) ([]loadLimit, error) {
	var out []loadLimit
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if !ok || strings.TrimSpace(k) == "" || err != nil || n < 0 {
			return nil, fmt.Errorf("%w: --%s %q: want STATUS_VARIABLE=NUMBER[,...], e.g. Threads_running=50", ErrUsage, flagName, s)
		}
		out = append(out, loadLimit{strings.TrimSpace(k), n})
	}
	return out, nil
}

// gateRun is the gate of one run and the goroutines that move it.
type gateRun struct {
	gate   *apply.Gate
	log    *slog.Logger
	cancel context.CancelCauseFunc
	stopCh chan struct{}
	wg     sync.WaitGroup
	dbs    []*sql.DB
}

// ErrCriticalLoad ends a run that met --critical-load: exit 1.
var ErrCriticalLoad = errors.New("critical load")

// startGate makes the run's gate (cfg.Gate), listens for SIGUSR1 (pause)
// and SIGUSR2 (resume), and starts the throttle checks; target is the
// MySQL target's pool the load limits read (nil: a PostgreSQL target).
// The context returned is cancelled, with a cause, when --critical-load is met.
func startGate(ctx context.Context, log *slog.Logger, target *sql.DB, o GateOptions, secrets *Secrets, cfg *apply.Config) (*gateRun, context.Context, error) {
	maxLoad, err := parseLoad("max-load", o.MaxLoad)
	if err != nil {
		return nil, nil, err
	}
	critical, err := parseLoad("critical-load", o.CriticalLoad)
	if err != nil {
		return nil, nil, err
	}
	if target == nil && (len(maxLoad) > 0 || len(critical) > 0) {
		log.Warn("--max-load and --critical-load read MySQL status variables (SHOW GLOBAL STATUS), which a PostgreSQL target does not have: ignored")
		maxLoad, critical = nil, nil
	}
	if o.MaxLagMillis > 0 && len(o.Replicas) == 0 {
		return nil, nil, fmt.Errorf("%w: --max-lag-millis needs at least one --throttle-replica URL", ErrUsage)
	}
	if o.CheckEvery <= 0 {
		return nil, nil, fmt.Errorf("%w: --throttle-interval must be positive", ErrUsage)
	}
	g := &gateRun{gate: new(apply.Gate), log: log, stopCh: make(chan struct{})}
	for _, u := range o.Replicas {
		e, err := secrets.Endpoint(u, &secrets.Target)
		if err != nil {
			return nil, nil, fmt.Errorf("--throttle-replica: %w", err)
		}
		db, err := e.OpenDB()
		if err != nil {
			return nil, nil, fmt.Errorf("--throttle-replica %s: %w", e, err)
		}
		db.SetMaxOpenConns(1)
		g.dbs = append(g.dbs, db)
	}
	cfg.Gate = g.gate
	rctx, cancel := context.WithCancelCause(ctx)
	g.cancel = cancel

	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGUSR2)
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer signal.Stop(sig)
		for {
			select {
			case s := <-sig:
				if s == syscall.SIGUSR1 {
					g.pause("signal SIGUSR1")
				} else {
					g.resume("signal SIGUSR2")
				}
			case <-g.stopCh:
				return
			}
		}
	}()
	if len(maxLoad) > 0 || len(critical) > 0 || len(g.dbs) > 0 || o.FlagFile != "" {
		g.wg.Add(1)
		go g.checks(target, maxLoad, critical, time.Duration(o.MaxLagMillis)*time.Millisecond, o.FlagFile, o.CheckEvery)
	}
	return g, rctx, nil
}

func (g *gateRun) pause(by string) bool {
	ok := g.gate.Pause()
	if ok {
		g.log.Warn("paused: nothing new is started; what is in flight commits (resume: POST /resume or SIGUSR2)", "by", by)
	}
	return ok
}

func (g *gateRun) resume(by string) bool {
	ok := g.gate.Resume()
	if ok {
		g.log.Info("resumed", "by", by, "paused_seconds", g.gate.State().PausedFor.Seconds())
	}
	return ok
}

// stop ends the gate's goroutines; the run's error is err, turned into
// the critical-load error when that stopped it.
func (g *gateRun) stop(rctx context.Context, err error) error {
	close(g.stopCh)
	g.wg.Wait()
	for _, db := range g.dbs {
		db.Close()
	}
	if cause := context.Cause(rctx); errors.Is(cause, ErrCriticalLoad) {
		return cause
	}
	return err
}

func (g *gateRun) checks(target *sql.DB, maxLoad, critical []loadLimit, maxLag time.Duration, flagFile string, every time.Duration) {
	defer g.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		g.check(target, maxLoad, critical, maxLag, flagFile, every)
		select {
		case <-t.C:
		case <-g.stopCh:
			return
		}
	}
}

func (g *gateRun) check(target *sql.DB, maxLoad, critical []loadLimit, maxLag time.Duration, flagFile string, every time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), max(every, time.Second))
	defer cancel()
	if len(maxLoad) > 0 || len(critical) > 0 {
		vals, err := statusValues(ctx, target, append(maxLoad[:len(maxLoad):len(maxLoad)], critical...))
		if err != nil {
			g.log.Warn("--max-load/--critical-load: cannot read the target's status; keeping the last verdict", "err", err)
		} else {
			if why := over(vals, critical, true); why != "" {
				g.log.Error("critical load on the target: stopping; what is in flight commits and the position is stored", "load", why)
				g.cancel(fmt.Errorf("%w on the target: %s (--critical-load); prepl stopped cleanly with its position stored: "+
					"start it again once the target's load is back down", ErrCriticalLoad, why))
			}
			g.set(apply.ThrottleMaxLoad, over(vals, maxLoad, false))
		}
	}
	if len(g.dbs) > 0 {
		g.set(apply.ThrottleReplicaLag, g.replicaLag(ctx, maxLag))
	}
	if flagFile != "" {
		why := ""
		if _, err := os.Stat(flagFile); err == nil {
			why = flagFile + " exists"
		}
		g.set(apply.ThrottleFlagFile, why)
	}
}

// set holds the gate for reason while why is not "".
func (g *gateRun) set(reason, why string) {
	if g.gate.Throttle(reason, why != "", why) {
		if why != "" {
			g.log.Warn("throttling: holding new work", "reason", reason, "why", why)
		} else {
			g.log.Info("throttling over", "reason", reason, "throttled_seconds", g.gate.State().ThrottledFor[reason].Seconds())
		}
	}
}

// over says which limit vals break ("Threads_running=73 > 50"), or "".
// atLimit: reaching the limit counts (--critical-load), else passing it.
func over(vals map[string]int64, limits []loadLimit, atLimit bool) string {
	var out []string
	for _, l := range limits {
		v, ok := vals[strings.ToLower(l.name)]
		switch {
		case !ok:
		case atLimit && v >= l.limit:
			out = append(out, fmt.Sprintf("%s=%d >= %d", l.name, v, l.limit))
		case !atLimit && v > l.limit:
			out = append(out, fmt.Sprintf("%s=%d > %d", l.name, v, l.limit))
		}
	}
	return strings.Join(out, ", ")
}

// statusValues reads the global status variables limits name.
func statusValues(ctx context.Context, db *sql.DB, limits []loadLimit) (map[string]int64, error) {
	out := map[string]int64{}
	for _, l := range limits {
		if _, done := out[strings.ToLower(l.name)]; done {
			continue
		}
		var name, val string
		// SHOW is not preparable everywhere: the name goes quoted in the text.
		err := db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE "+mysql.QuoteString(l.name)).Scan(&name, &val)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("the target has no status variable %q (see SHOW GLOBAL STATUS)", l.name)
		}
		if err != nil {
			return nil, err
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("status variable %s=%q is not a number", name, val)
		}
		out[strings.ToLower(l.name)] = n
	}
	return out, nil
}

// replicaLag says which replicas lag past maxLag, or "". A replica whose
// lag cannot be read (replication stopped, unreachable) holds too.
func (g *gateRun) replicaLag(ctx context.Context, maxLag time.Duration) string {
	var out []string
	for i, db := range g.dbs {
		lag, err := secondsBehind(ctx, db)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("replica %d: %v", i+1, err))
		case lag > maxLag:
			out = append(out, fmt.Sprintf("replica %d: lag %.0fs > %dms", i+1, lag.Seconds(), maxLag.Milliseconds()))
		}
	}
	return strings.Join(out, "; ")
}

// secondsBehind reads the replica's lag: Seconds_Behind_Master of SHOW
// SLAVE STATUS, or, where the server has only SHOW REPLICA STATUS (MySQL
// 8.4), its Seconds_Behind_Source.
func secondsBehind(ctx context.Context, db *sql.DB) (time.Duration, error) {
	rows, err := db.QueryContext(ctx, "SHOW SLAVE STATUS")
	if err != nil {
		var err2 error
		if rows, err2 = db.QueryContext(ctx, "SHOW REPLICA STATUS"); err2 != nil {
			return 0, fmt.Errorf("SHOW SLAVE STATUS: %w; SHOW REPLICA STATUS: %v", err, err2)
		}
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	if !rows.Next() {
		return 0, errors.New("not a replica (SHOW SLAVE STATUS is empty)")
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return 0, err
	}
	return lagOf(cols, vals)
}

// lagOf finds the lag in a row of SHOW SLAVE STATUS (Seconds_Behind_Master)
// or SHOW REPLICA STATUS (MySQL 8.0.22+: Seconds_Behind_Source).
func lagOf(cols []string, vals []sql.NullString) (time.Duration, error) {
	for i, c := range cols {
		if c == "Seconds_Behind_Master" || c == "Seconds_Behind_Source" {
			if !vals[i].Valid {
				return 0, fmt.Errorf("replication is not running (%s is NULL)", c)
			}
			n, err := strconv.ParseInt(vals[i].String, 10, 64)
			return time.Duration(n) * time.Second, err
		}
	}
	return 0, errors.New("the replica's status has neither Seconds_Behind_Master nor Seconds_Behind_Source")
}

// handlers adds POST /pause and /resume to h (the metrics address, so
// behind the same --web-config TLS and basic auth as /metrics).
func (g *gateRun) handlers(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", h)
	do := func(f func(string) bool, yes, no string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				w.Header().Set("Allow", "POST")
				http.Error(w, "use POST", http.StatusMethodNotAllowed)
				return
			}
			if f("HTTP from " + r.RemoteAddr) {
				fmt.Fprintln(w, yes)
			} else {
				fmt.Fprintln(w, no)
			}
		}
	}
	mux.HandleFunc("/pause", do(g.pause, "paused", "already paused"))
	mux.HandleFunc("/resume", do(g.resume, "resumed", "not paused"))
	return mux
}
