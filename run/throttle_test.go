package run

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prepl/prepl/apply"
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
