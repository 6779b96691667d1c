package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prepl/prepl/analyze"
	"github.com/prepl/prepl/sandbox"
)

// TestAnalyzeStopsOnSignal: prepl analyze following a live source
// (--duration 10m) stops at once on SIGTERM, as it applies nothing:
// it reports the transactions it has read, marked interrupted, and exits
// 143 (128 + SIGTERM), long before the input's end.
func TestAnalyzeStopsOnSignal(t *testing.T) {
	src := sandbox.MustStart(t, analyzeSource())
	db := sandbox.MustOpen(t, src, "")
	stmts := []string{"CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB"}
	for i := range 50 {
		stmts = append(stmts, "INSERT INTO d.t VALUES ("+strconv.Itoa(i)+", 0)")
	}
	sandbox.MustExec(t, db, stmts...)

	var stdout, stderr bytes.Buffer
	cmd := exec.Command(preplBinary(t), "analyze", "--json", "--source", src.URL(), "--catalog", "binlog", "--duration", "10m")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	})
	// Once the source serves analyze's binlog dump, analyze reads and
	// then waits for more (its signal handler is in place).
	waitFor(t, "analyze's binlog dump on the source", func() bool {
		var n int
		err := db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump'").Scan(&n)
		return err == nil && n > 0
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-exited:
	case <-time.After(2 * time.Minute): // ends a hang only: --duration is 10 minutes
		cmd.Process.Kill()
		t.Fatalf("prepl analyze did not stop on SIGTERM\n%s", stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %v, want %d (128 + SIGTERM)\n%s", err, 128+int(syscall.SIGTERM), stderr.String())
	}
	var r analyze.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("no report on stdout: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(r.Partial, "interrupted") || r.Summary.Transactions == 0 {
		t.Errorf("report of %d transactions, partial %q: want those read, marked interrupted", r.Summary.Transactions, r.Partial)
	}
	if strings.Contains(stderr.String(), "finishing transactions in flight") || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say analyze stopped:\n%s", stderr.String())
	}
	checkAnalyzeFlags(t, stderr.String())
}

// checkAnalyzeFlags fails t when text names a flag prepl analyze does not
// have (as --flag followed by a space, a comma, a quote or the end).
func checkAnalyzeFlags(t *testing.T, text string) {
	t.Helper()
	fs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	var f analyzeFlags
	f.register(fs)
	for _, m := range regexp.MustCompile(`(?:^|[\s(])--([a-z][a-z-]*[a-z])\b`).FindAllStringSubmatch(text, -1) {
		if fs.Lookup(m[1]) == nil && m[1] != "help" {
			t.Errorf("analyze's output names --%s, a flag analyze does not have:\n%s", m[1], text)
		}
	}
}
