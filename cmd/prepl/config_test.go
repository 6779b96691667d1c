package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testFlags is a command's flag set with a flag of every kind.
type testFlags struct {
	target, mode string
	workers      int
	stop         bool
	every        time.Duration
	include      multiFlag
}

func newTestFlags(cmd string) (*flag.FlagSet, *testFlags) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	v := &testFlags{}
	fs.StringVar(&v.target, "target", "", "")
	fs.StringVar(&v.mode, "mode", "writeset", "")
	fs.IntVar(&v.workers, "workers", 4, "")
	fs.BoolVar(&v.stop, "stop-at-end", false, "")
	fs.DurationVar(&v.every, "progress", 10*time.Second, "")
	fs.Var(&v.include, "include", "")
	return fs, v
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "prepl.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigPrecedence(t *testing.T) {
	path := writeConfig(t, `
target = "mysql://top@h:1"
workers = 2
mode = "serial"
progress = "30s"

[replicate]
workers = 16
stop-at-end = true
include = ["a.*", "b.t"]

[replay]
workers = 99
`)
	fs, v := newTestFlags("replicate")
	if err := parseFlags(fs, []string{"--config", path, "--mode", "optimistic"}); err != nil {
		t.Fatal(err)
	}
	if v.target != "mysql://top@h:1" || v.workers != 16 || v.mode != "optimistic" || !v.stop || v.every != 30*time.Second ||
		strings.Join(v.include, ",") != "a.*,b.t" {
		t.Errorf("flags after config: %+v; want the top's target and progress, [replicate]'s workers, stop-at-end and include, the command line's mode", v)
	}
	// The command line wins for a repeatable flag too: no mixing with the file.
	fs, v = newTestFlags("replicate")
	if err := parseFlags(fs, []string{"--include", "c.*", "--config", path}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(v.include, ",") != "c.*" {
		t.Errorf("include %v, want only the command line's c.*", v.include)
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{`workerz = 3`, `unknown key "workerz": prepl replicate has no --workerz flag`},
		{"[replicate]\nsource = \"x\"", `unknown key "[replicate] source"`},
		{`nosuchkey = "x"`, `keys for one command go under [COMMAND]`},
		{"[replicat]\nworkers = 1", `unknown table [replicat]`},
		{`workers = "four"`, `key "workers" = "four": want a whole number`},
		{`stop-at-end = "yes"`, `key "stop-at-end" = "yes": want a boolean`},
		{`progress = 10`, `durations are strings`},
		{`mode = ["a", "b"]`, `takes one value, not a list`},
		{`config = "other.toml"`, `cannot name another one`},
		{"workers = 2\nworkers = 3", `already defined`},
		{`workers = `, `prepl.toml:1`},
	}
	for _, c := range cases {
		path := writeConfig(t, c.text)
		fs, _ := newTestFlags("replicate")
		err := parseFlags(fs, []string{"--config", path})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("config %q: error %v, want one naming %s and containing %q", c.text, err, path, c.want)
		}
	}
	fs, _ := newTestFlags("replicate")
	if err := parseFlags(fs, []string{"--config", "/nonexistent/prepl.toml"}); err == nil || !strings.Contains(err.Error(), "/nonexistent/prepl.toml") {
		t.Errorf("missing config file: %v", err)
	}
}

// TestConfigTopLevelKeyIgnored: a top-level key applies to the commands
// that have that flag and is ignored by the others (replay has no
// --source, replicate has); under [replay] the same key is an error.
func TestConfigTopLevelKeyIgnored(t *testing.T) {
	path := writeConfig(t, "source = \"mysql://a@b:1\"\nworkers = 7\n")
	fs, v := newTestFlags("replay")
	if err := parseFlags(fs, []string{"--config", path}); err != nil || v.workers != 7 {
		t.Fatalf("replay with a top-level source key: %v (workers %d, want 7)", err, v.workers)
	}
	path = writeConfig(t, "[replay]\nsource = \"mysql://a@b:1\"\n")
	fs, _ = newTestFlags("replay")
	if err := parseFlags(fs, []string{"--config", path}); err == nil || !strings.Contains(err.Error(), `"[replay] source"`) {
		t.Fatalf("[replay] source: %v, want an unknown key error", err)
	}
}

// TestFlagsAfterArguments: GNU-style parsing takes flags after the
// arguments, --flag=value and --flag value, and -- ends the flags.
func TestFlagsAfterArguments(t *testing.T) {
	fs, v := newTestFlags("replay")
	if err := parseFlags(fs, []string{"binlog.000002", "--target", "mysql://x@y:1", "--workers=3", "--stop-at-end", "binlog.000003", "--", "--include"}); err != nil {
		t.Fatal(err)
	}
	if v.target != "mysql://x@y:1" || v.workers != 3 || !v.stop || strings.Join(fs.Args(), " ") != "binlog.000002 binlog.000003 --include" {
		t.Fatalf("target %q workers %d stop %v args %q", v.target, v.workers, v.stop, fs.Args())
	}
	fs, v = newTestFlags("replay")
	if err := parseFlags(fs, []string{"-target", "mysql://x@y:2", "-workers=5", "f"}); err != nil || v.target != "mysql://x@y:2" || v.workers != 5 {
		t.Fatalf("single-dash long flags: %v (target %q workers %d)", err, v.target, v.workers)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["target"] || !given["workers"] || given["mode"] {
		t.Fatalf("flags given on the command line: %v", given)
	}
}

// TestExampleConfig loads docs/prepl.example.toml in every command that
// reads one. The targets are overridden on the command line with a port
// nothing listens on: each command must get past its configuration (no
// usage error, exit 2) and fail connecting (exit 1; status: CRITICAL, 2),
// quickly, which also shows the command line winning over the file.
func TestExampleConfig(t *testing.T) {
	example := filepath.Join("..", "..", "docs", "prepl.example.toml")
	dead := "mysql://root@127.0.0.1:1"
	for _, c := range []struct {
		args []string
		code int
	}{
		// Short timeouts on the command line (it wins over the file): the
		// example's 1m of retries against a dead address was a minute of
		// make test.
		{[]string{"replicate", "--config", example, "--source", dead, "--target", dead, "--reconnect-timeout", "1s", "--source-reconnect-timeout", "1s"}, 1},
		{[]string{"replay", "--config", example, "--target", dead, "--reconnect-timeout", "1s", fixtureDir + "mysql-bin.checksum-none"}, 1},
		{[]string{"status", "--config", example, "--target", dead, "--metrics-addr", "127.0.0.1:1"}, statusCritical},
	} {
		args := c.args
		code, out := prepl(t, args...)
		if code != c.code || strings.Contains(out, "config") || !strings.Contains(out, "127.0.0.1:1") {
			t.Errorf("prepl %s: exit %d, want %d from connecting to 127.0.0.1:1:\n%s", strings.Join(args, " "), code, c.code, out)
		}
	}
}
