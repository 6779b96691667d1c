package run

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/sandbox"
)

func TestParseLoadAndOver(t *testing.T) {
	for _, c := range []struct {
		spec    string
		vals    map[string]int64
		at      bool
		want    string
		wantErr bool
	}{
		{"Threads_running=50", map[string]int64{"threads_running": 50}, false, "", false},
		{"Threads_running=50", map[string]int64{"threads_running": 51}, false, "Threads_running=51 > 50", false},
		{"Threads_running=50", map[string]int64{"threads_running": 50}, true, "Threads_running=50 >= 50", false},
		{" Threads_running = 5 , Threads_connected=9", map[string]int64{"threads_running": 1, "threads_connected": 10}, false, "Threads_connected=10 > 9", false},
		{"", nil, false, "", false},
		{"Threads_running", nil, false, "", true},
		{"Threads_running=x", nil, false, "", true},
		{"=5", nil, false, "", true},
		{"Threads_running=-1", nil, false, "", true},
	} {
		lim, err := parseLoad("max-load", c.spec)
		if (err != nil) != c.wantErr {
			t.Errorf("parseLoad(%q): %v", c.spec, err)
			continue
		}
		if err == nil {
			if got := over(c.vals, lim, c.at); got != c.want {
				t.Errorf("over(%v, %q, %v) = %q, want %q", c.vals, c.spec, c.at, got, c.want)
			}
		}
	}
}

// TestThrottleFlagFile: the gate is held while the file exists, and the
// time held is counted under its reason.
func TestThrottleFlagFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "throttle")
	g := &gateRun{gate: new(apply.Gate), log: slog.New(slog.DiscardHandler)}
	g.check(nil, nil, nil, 0, path, 1)
	if held, _ := g.gate.Held(); held {
		t.Fatal("held without the file")
	}
	os.WriteFile(path, nil, 0o600)
	g.check(nil, nil, nil, 0, path, 1)
	held, changed := g.gate.Held()
	st := g.gate.State()
	if !held || !strings.Contains(st.Throttled[apply.ThrottleFlagFile], path) {
		t.Fatalf("file present: held %v, state %+v", held, st)
	}
	os.Remove(path)
	g.check(nil, nil, nil, 0, path, 1)
	select {
	case <-changed:
	default:
		t.Fatal("releasing the gate did not signal its change")
	}
	st = g.gate.State()
	if held, _ := g.gate.Held(); held || len(st.Throttled) != 0 || st.ThrottledFor[apply.ThrottleFlagFile] <= 0 {
		t.Fatalf("file gone: held %v, state %+v", held, st)
	}
	// A pause holds too, and is told apart.
	if !g.gate.Pause() || g.gate.Pause() {
		t.Fatal("Pause: want true then false")
	}
	if r := g.gate.State().Reasons(); strings.Join(r, ",") != "paused" {
		t.Fatalf("reasons %v", r)
	}
	if !g.gate.Resume() || g.gate.Resume() {
		t.Fatal("Resume: want true then false")
	}
}

// TestLagOf: the lag is read from MariaDB's and MySQL's SHOW SLAVE STATUS
// column or from MySQL 8.4's SHOW REPLICA STATUS column; a stopped
// replica (NULL) and a row with neither column are errors.
func TestLagOf(t *testing.T) {
	v := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
	for _, c := range []struct {
		cols    []string
		vals    []sql.NullString
		want    time.Duration
		wantErr string
	}{
		{[]string{"Slave_IO_State", "Seconds_Behind_Master"}, []sql.NullString{v("x"), v("7")}, 7 * time.Second, ""},
		{[]string{"Replica_IO_State", "Seconds_Behind_Source"}, []sql.NullString{v("x"), v("0")}, 0, ""},
		{[]string{"Seconds_Behind_Source"}, []sql.NullString{{}}, 0, "Seconds_Behind_Source is NULL"},
		{[]string{"Slave_IO_State"}, []sql.NullString{v("x")}, 0, "neither"},
	} {
		got, err := lagOf(c.cols, c.vals)
		switch {
		case c.wantErr == "" && (err != nil || got != c.want):
			t.Errorf("lagOf(%v) = %v, %v; want %v", c.cols, got, err, c.want)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("lagOf(%v) error %v; want one containing %q", c.cols, err, c.wantErr)
		}
	}
}

// TestSecondsBehindOnMariaDB reads a real replica's lag, and refuses a
// server that is not one.
func TestSecondsBehindOnMariaDB(t *testing.T) {
	o := sandbox.Defaults()
	o.Binlog = true
	src := sandbox.MustStart(t, o)
	rep := sandbox.MustStart(t, sandbox.RelayReplica())
	rdb := sandbox.MustOpen(t, rep, "")
	ctx := context.Background()
	if _, err := secondsBehind(ctx, sandbox.MustOpen(t, src, "")); err == nil || !strings.Contains(err.Error(), "not a replica") {
		t.Errorf("secondsBehind on a source: %v; want 'not a replica'", err)
	}
	sandbox.MustExec(t, rdb, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = %d, MASTER_USER = 'root', "+
		"MASTER_PASSWORD = '', MASTER_USE_GTID = slave_pos", src.Port), "START SLAVE")
	deadline := time.Now().Add(time.Minute)
	for {
		lag, err := secondsBehind(ctx, rdb)
		if err == nil {
			if lag < 0 || lag > time.Minute {
				t.Errorf("lag %v of an idle replica", lag)
			}
			return
		}
		if !strings.Contains(err.Error(), "is NULL") || time.Now().After(deadline) {
			t.Fatalf("secondsBehind on a started replica: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
