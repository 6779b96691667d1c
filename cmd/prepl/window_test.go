package main

import (
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// TestWindowSmallerThanTransactions: transactions larger than the window
// run alone, reading waits while the window is full, both are reported,
// and the target still equals the source.
func TestWindowSmallerThanTransactions(t *testing.T) {
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, db, "CREATE DATABASE big", "CREATE TABLE big.t (id INT PRIMARY KEY, pad VARCHAR(100))")
	for i := 0; i < 20; i++ {
		sandbox.MustExec(t, db, fmt.Sprintf("INSERT INTO big.t SELECT seq + %d, REPEAT('x', 100) FROM big.seq_1_to_100", i*1000))
	}
	tgt := targetServer(t)
	out := mustPrepl(t, append([]string{"replay", "--target", tgt.URL(), "--workers", "4", "--window", "4KiB", "--progress", "0"},
		binlogFiles(t, src)...)...)
	sameRows(t, src, tgt)
	for _, want := range []string{"big-transaction=20", "window-full="} {
		if !strings.Contains(out, want) {
			t.Fatalf("summary does not report %q:\n%s", want, out)
		}
	}
}

// TestAnalyzeWindowIsReplays: analyze predicts the engine replay and
// replicate run by default, so its --window default is theirs (a quarter
// of the default --memory-budget), and follows it if that changes.
func TestAnalyzeWindowIsReplays(t *testing.T) {
	rfs := flag.NewFlagSet("replay", flag.ContinueOnError)
	var af applyFlags
	af.register(rfs, "replay")
	if err := rfs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	cfg, err := af.config(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	afs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	var f analyzeFlags
	f.register(afs)
	if err := afs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	opt, err := f.options()
	if err != nil {
		t.Fatal(err)
	}
	if opt.WindowBytes != cfg.WindowBytes || cfg.WindowBytes != af.memBytes/4 {
		t.Fatalf("analyze predicts a window of %d bytes by default, replay runs with %d (memory budget %d)",
			opt.WindowBytes, cfg.WindowBytes, af.memBytes)
	}
}
