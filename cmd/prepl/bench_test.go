package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prepl/prepl/bench"
)

// TestBenchSmoke runs a tiny benchmark end to end: a few hundred
// transactions, one workload, one config, threads 0 and 2, MariaDB's
// conservative replica and prepl writeset. It checks that the outputs are
// written and parse, and that every run left target = source; it checks
// no timing.
func TestBenchSmoke(t *testing.T) {
	out := t.TempDir()
	code, output := prepl(t, "bench", "--prepl", preplBinary(t), "--out", out,
		"--workloads", "update-index", "--rows", "1000", "--events", "300", "--source-threads", "8",
		"--threads", "0,2", "--configs", "C", "--systems", "mariadb,prepl-replicate",
		"--mariadb-modes", "conservative", "--prepl-modes", "writeset", "--repeats", "1")
	if code != 0 {
		t.Fatalf("prepl bench: exit %d\n%s", code, output)
	}
	for _, want := range []string{"[1/5, ETA ?]", "target = source", "results: "} {
		if !strings.Contains(output, want) {
			t.Errorf("output lacks %q:\n%s", want, output)
		}
	}

	f, err := os.Open(filepath.Join(out, bench.ResultsCSV))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	results, err := bench.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	// MariaDB serial and conservative/2, prepl serial and writeset/2, the physical limit.
	if len(results) != 5 {
		t.Fatalf("%d runs in %s, want 5: %+v", len(results), bench.ResultsCSV, results)
	}
	systems := map[bench.System]int{}
	for _, r := range results {
		systems[r.System]++
		if !r.Verified || r.Err != "" {
			t.Errorf("%s: target not verified equal to source: %q", r.Cell, r.Err)
		}
		if r.Seconds <= 0 || r.Txns <= 0 || r.TxnPerSec() <= 0 {
			t.Errorf("%s: seconds %v, txns %d: want positive numbers", r.Cell, r.Seconds, r.Txns)
		}
		if r.Txns != 300 {
			t.Errorf("%s: %d transactions in the binlog, want sysbench's 300 events", r.Cell, r.Txns)
		}
	}
	if systems[bench.MariaDB] != 2 || systems[bench.PreplReplicate] != 2 || systems[bench.Limit] != 1 {
		t.Errorf("runs per system = %v, want mariadb 2, prepl-replicate 2, limit 1", systems)
	}

	md, err := os.ReadFile(filepath.Join(out, bench.ResultsMD))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| threads | MariaDB conservative | prepl writeset |", "### Targets", "Physical limit"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("%s lacks %q:\n%s", bench.ResultsMD, want, md)
		}
	}
	png, err := os.ReadFile(filepath.Join(out, bench.ChartName("update-index", "C")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(png), "\x89PNG") {
		t.Errorf("chart is not a PNG")
	}
}

// TestBenchTPCC runs the TPC-C-like workload, shrunk, end to end: MariaDB's
// replica and prepl catch up with it and equal the source; --save-binlog
// leaves the workload's binlog files and start GTID behind.
func TestBenchTPCC(t *testing.T) {
	out := t.TempDir()
	saved := filepath.Join(out, "binlog")
	code, output := prepl(t, "bench", "--prepl", preplBinary(t), "--out", out, "--save-binlog", saved,
		"--workloads", "tpcc", "--script-args", "--warehouses=2 --items=1000 --customers=100", "--events", "300", "--source-threads", "8",
		"--threads", "0,2", "--configs", "C", "--systems", "mariadb,prepl-replicate",
		"--mariadb-modes", "conservative", "--prepl-modes", "writeset", "--repeats", "1", "--limit-args", "")
	if code != 0 {
		t.Fatalf("prepl bench: exit %d\n%s", code, output)
	}
	f, err := os.Open(filepath.Join(out, bench.ResultsCSV))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	results, err := bench.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 4 {
		t.Fatalf("%d runs in %s, want 4: %+v", len(results), bench.ResultsCSV, results)
	}
	for _, r := range results {
		if !r.Verified || r.Err != "" {
			t.Errorf("%s: target not verified equal to source: %q", r.Cell, r.Err)
		}
		// Read-only transactions and rolled back new-orders write no
		// binlog: fewer transactions than events, but most of them.
		if r.Txns < 200 || r.Txns > 300 {
			t.Errorf("%s: %d transactions in the binlog of 300 events, want 200 to 300", r.Cell, r.Txns)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, bench.ResultsMD))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`bench/lua/tpcc.lua` (`--warehouses=2 --items=1000 --customers=100`", "Settings: data sized by the workload's script"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("%s lacks %q:\n%s", bench.ResultsMD, want, md)
		}
	}
	files, _ := filepath.Glob(filepath.Join(saved, "tpcc", "binlog.[0-9]*"))
	gtid, err := os.ReadFile(filepath.Join(saved, "tpcc", "start-gtid"))
	if len(files) == 0 || err != nil || len(strings.TrimSpace(string(gtid))) == 0 {
		t.Errorf("--save-binlog: files %v, start-gtid %q (%v): want binlog files and a GTID", files, gtid, err)
	}
}

func TestBenchUsage(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--workloads", "tpce"},
		{"bench", "--configs", "E"},
		{"bench", "--threads", "0,x"},
		{"bench", "--prepl-modes", "fastest"},
		{"bench", "--systems", "postgres"},
		{"bench", "--mariadb-modes", "fast"},
		{"bench", "extra"},
		{"bench", "scale", "--volume", "lots"},
		{"bench", "scale", "--workers", "x"},
		{"bench", "scale", "extra"},
	} {
		if code, out := prepl(t, args...); code != 2 {
			t.Errorf("prepl %s: exit %d, want 2 (usage)\n%s", strings.Join(args, " "), code, out)
		}
	}
	code, out := prepl(t, "bench", "--help")
	if code != 0 || !strings.Contains(out, "Example") {
		t.Errorf("prepl bench --help: exit %d\n%s", code, out)
	}
}
