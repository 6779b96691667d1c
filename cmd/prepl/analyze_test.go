package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prepl/prepl/analyze"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/sandbox"
)

// analyzeRun runs prepl analyze in-process.
func analyzeRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(append([]string{"analyze"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func analyzeJSON(t *testing.T, args ...string) *analyze.Report {
	t.Helper()
	code, out, errs := analyzeRun(t, append([]string{"--json"}, args...)...)
	if code != 0 {
		t.Fatalf("prepl analyze %s: exit %d\n%s", strings.Join(args, " "), code, errs)
	}
	var r analyze.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("JSON report: %v\n%s", err, out)
	}
	return &r
}

// analyzeSource: a source whose binlog has full row metadata, fast.
func analyzeSource() sandbox.Options {
	o := sandbox.Defaults()
	o.Binlog = true
	o.BinlogRowMetadata = "FULL"
	o.SyncBinlog, o.FlushLogAtTrxCommit = 0, 2
	return o
}

// TestAnalyzeCommand drives prepl analyze on a sandbox source: files and
// stream give the same analysis, --html writes one self-contained page,
// --catalog sees the unique key the binlog does not carry, --calibrate
// measures the target and cleans up, a damaged file is named with its
// offset after a partial report, and usage mistakes exit 2.
func TestAnalyzeCommand(t *testing.T) {
	src := sandbox.MustStart(t, analyzeSource())
	db := sandbox.MustOpen(t, src, "")
	stmts := []string{
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
		"CREATE TABLE d.u (id INT PRIMARY KEY, code VARCHAR(10) NOT NULL, UNIQUE KEY code (code)) ENGINE=InnoDB",
	}
	for i := range 20 {
		// Bug#86078's pattern: a unique value moves to another primary
		// key; only the unique key says the two transactions conflict.
		stmts = append(stmts,
			"INSERT INTO d.u VALUES ("+strconv.Itoa(2*i)+", 'c"+strconv.Itoa(i)+"')",
			"DELETE FROM d.u WHERE id = "+strconv.Itoa(2*i),
			"INSERT INTO d.u VALUES ("+strconv.Itoa(2*i+1)+", 'c"+strconv.Itoa(i)+"')")
	}
	for i := range 100 {
		stmts = append(stmts, "INSERT INTO d.t VALUES ("+strconv.Itoa(i)+", 1)")
	}
	sandbox.MustExec(t, db, stmts...)
	const txns = 3 + 60 + 100
	sandbox.MustExec(t, db, "FLUSH BINARY LOGS")
	files, err := src.BinlogFiles()
	if err != nil {
		t.Fatal(err)
	}
	files = files[:len(files)-1] // the last one is open

	fromFiles := analyzeJSON(t, files...)
	if fromFiles.Summary.Transactions != txns || fromFiles.Flavor != "mariadb" || len(fromFiles.Modes) != 5 {
		t.Fatalf("files: %d transactions, flavor %q, %d modes", fromFiles.Summary.Transactions, fromFiles.Flavor, len(fromFiles.Modes))
	}

	t.Run("stream", func(t *testing.T) {
		r := analyzeJSON(t, "--source", src.URL(), "--catalog", "binlog")
		if r.Summary.Transactions != txns || r.Summary.Rows != fromFiles.Summary.Rows {
			t.Errorf("stream: %d transactions %d rows, files: %d %d", r.Summary.Transactions, r.Summary.Rows, txns, fromFiles.Summary.Rows)
		}
		a, _ := r.Prediction("writeset", 8)
		b, _ := fromFiles.Prediction("writeset", 8)
		if a.Seconds != b.Seconds {
			t.Errorf("stream predicts %v s, files %v s", a.Seconds, b.Seconds)
		}
	})

	t.Run("stream for a duration", func(t *testing.T) {
		// Following the source past its end, then stopping at --duration,
		// is a normal end: the report covers what was read.
		r := analyzeJSON(t, "--source", src.URL(), "--catalog", "binlog", "--duration", "500ms", "--workers", "1,4")
		if r.Summary.Transactions != txns || r.Partial != "" {
			t.Errorf("stream with --duration: %d transactions (want %d), partial %q", r.Summary.Transactions, txns, r.Partial)
		}
	})

	t.Run("catalog sees unique keys", func(t *testing.T) {
		r := analyzeJSON(t, "--catalog", src.URL(), files[len(files)-1])
		ws, _ := r.Mode("writeset")
		base, _ := fromFiles.Mode("writeset")
		if r.Catalog.FromServer != 2 || ws.Waits["key-conflict"] < base.Waits["key-conflict"]+20 {
			t.Errorf("with the catalog: %d tables from the server, %d key conflicts (%v); from the binlog only: %d (%v)",
				r.Catalog.FromServer, ws.Waits["key-conflict"], ws.Waits, base.Waits["key-conflict"], base.Waits)
		}
	})

	t.Run("html", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "report.html")
		code, out, errs := analyzeRun(t, append([]string{"--html", path}, files...)...)
		if code != 0 || !strings.Contains(out, "Speedup prepl's engine gets from workers") || !strings.Contains(errs, path) {
			t.Fatalf("exit %d\n%s\n%s", code, out, errs)
		}
		page, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(page), `src="data:image/png;base64,`); n != 3 {
			t.Errorf("%d embedded charts, want 3", n)
		}
	})

	t.Run("damaged file", func(t *testing.T) {
		last := files[len(files)-1]
		b, err := os.ReadFile(last)
		if err != nil {
			t.Fatal(err)
		}
		cut := filepath.Join(t.TempDir(), filepath.Base(last))
		if err := os.WriteFile(cut, b[:len(b)*2/3], 0o644); err != nil {
			t.Fatal(err)
		}
		other := filepath.Join(t.TempDir(), "binlog.999999")
		if err := os.WriteFile(other, b[:len(b)*2/3], 0o644); err != nil {
			t.Fatal(err)
		}
		// Not the last file: the cut transaction is an error naming the file and offset.
		code, out, errs := analyzeRun(t, cut, other)
		if code != 2 || !strings.Contains(errs, filepath.Base(last)+" at offset") || !strings.Contains(out, "PARTIAL") {
			t.Errorf("damaged file: exit %d\nstdout: %.300s\nstderr: %s", code, out, errs)
		}
		// The last file cut inside a transaction may still be written: a warning.
		code, out, _ = analyzeRun(t, cut)
		if code != 0 || !strings.Contains(out, "warning:") || !strings.Contains(out, "incomplete") {
			t.Errorf("file cut at the end: exit %d\n%.500s", code, out)
		}
	})

	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{
			{},
			{"--source", src.URL(), files[0]},
			{"--workers", "0", files[0]},
			{"--modes", "fastest", files[0]},
			{"--start-gtid", "0-1-1", files[0]},
			{filepath.Join(t.TempDir(), "missing")},
		} {
			if code, _, errs := analyzeRun(t, args...); code != 2 {
				t.Errorf("prepl analyze %v: exit %d, want 2 (%s)", args, code, errs)
			}
		}
		code, _, errs := analyzeRun(t, "--help")
		if code != 0 || !strings.Contains(errs, "Examples:") || !strings.Contains(errs, "--calibrate") {
			t.Errorf("--help: exit %d\n%s", code, errs)
		}
	})

	t.Run("calibrate", func(t *testing.T) {
		tgt := sandbox.MustStart(t, sandbox.Defaults())
		code, out, errs := analyzeRun(t, "--json", "--calibrate", tgt.URL(), files[len(files)-1])
		var r analyze.Report
		if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
			t.Fatalf("exit %d, %v\n%s", code, err, errs)
		}
		c := r.Model.Costs
		if !strings.HasPrefix(c.Source, "calibrated on ") || c.Row <= 0 || c.Commit <= 0 || c.PerKiB <= 0 || c.Cores < 1 || c.Start <= 0 {
			t.Errorf("calibrated costs %+v", c)
		}
		// The target has none of the binlog's tables: its time on the
		// binlog's units cannot be measured, and analyze says so.
		if !strings.Contains(errs, "not measured") {
			t.Errorf("no word of the units not measured:\n%s", errs)
		}
		var n int
		tdb := sandbox.MustOpen(t, tgt, "")
		if err := tdb.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'prepl_calibrate'").Scan(&n); err != nil || n != 0 {
			t.Errorf("scratch database left behind (%d, %v)", n, err)
		}
	})
}

// TestAnalyzeCalibrateUnits: on a target where the binlog starts (the
// tables there, the rows not yet), --calibrate times the target on the
// binlog's own units and rolls them back: the target is unchanged.
func TestAnalyzeCalibrateUnits(t *testing.T) {
	src := sandbox.MustStart(t, analyzeSource())
	tgt := sandbox.MustStart(t, sandbox.Defaults())
	schema := []string{"CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, k INT NOT NULL, v VARCHAR(20), KEY (k)) ENGINE=InnoDB",
		"CREATE TABLE d.m (id INT PRIMARY KEY) ENGINE=MyISAM"}
	sandbox.MustExec(t, sandbox.MustOpen(t, tgt, ""), schema...)
	// A replica prepl already applies to: its prepl tables exist.
	e, err := mysql.ParseURL(tgt.URL())
	if err != nil {
		t.Fatal(err)
	}
	pt, err := mysql.Open(context.Background(), e, "default")
	if err != nil {
		t.Fatal(err)
	}
	pt.Close()
	db := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, db, append(schema, "FLUSH BINARY LOGS")...)
	var stmts []string
	for i := range 300 {
		stmts = append(stmts, "INSERT INTO d.t VALUES ("+strconv.Itoa(i)+", "+strconv.Itoa(i%7)+", 'x')")
	}
	for i := range 10 { // in the sample: a rolled-back unit would leave these on the target
		stmts = append(stmts, "INSERT INTO d.m VALUES ("+strconv.Itoa(i)+")")
	}
	for i := range 100 {
		stmts = append(stmts, "UPDATE d.t SET k = k + 1 WHERE id = "+strconv.Itoa(i*3))
	}
	sandbox.MustExec(t, db, append(stmts, "FLUSH BINARY LOGS")...)
	files, err := src.BinlogFiles()
	if err != nil {
		t.Fatal(err)
	}
	tdb := sandbox.MustOpen(t, tgt, "")
	binlogStatements := func() (n int) {
		var name string
		if err := tdb.QueryRow("SHOW GLOBAL STATUS LIKE 'Com_binlog'").Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := binlogStatements()
	code, out, errs := analyzeRun(t, "--json", "--commit-unit", "50", "--calibrate", tgt.URL(), files[len(files)-2])
	// The units are sent as the engine sends them: on MariaDB, 50 rows
	// of inserts as rows events.
	if after := binlogStatements(); after == before {
		t.Errorf("the calibration sent no BINLOG statement: it timed SQL the engine does not send")
	}
	var r analyze.Report
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
		t.Fatalf("exit %d, %v\n%s", code, err, errs)
	}
	if strings.Contains(errs, "not measured") || r.Summary.Transactions != 410 {
		t.Errorf("%d transactions; the units not measured:\n%s", r.Summary.Transactions, errs)
	}
	var n int
	if err := sandbox.MustOpen(t, tgt, "").QueryRow("SELECT COUNT(*) FROM d.t").Scan(&n); err != nil || n != 0 {
		t.Errorf("the target has %d rows (%v) after the calibration, want none: the units are rolled back", n, err)
	}
	if err := sandbox.MustOpen(t, tgt, "").QueryRow("SELECT COUNT(*) FROM d.m").Scan(&n); err != nil || n != 0 {
		t.Errorf("the target's MyISAM table has %d rows (%v) after the calibration, want none: a rollback does not undo them", n, err)
	}
}

// TestAnalyzeCalibrateWithoutFullMetadata: a binlog written without
// binlog_row_metadata=FULL (MariaDB's default) names no columns; with
// --catalog naming a server that has the tables, --calibrate takes their
// definitions from it (it refused before, naming --target, a flag
// analyze does not have). Without a server that has them, the error
// names analyze's own flags.
func TestAnalyzeCalibrateWithoutFullMetadata(t *testing.T) {
	o := analyzeSource()
	o.BinlogRowMetadata = "MINIMAL"
	src := sandbox.MustStart(t, o)
	tgt := sandbox.MustStart(t, sandbox.Defaults())
	db := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, db, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB", "FLUSH BINARY LOGS")
	var stmts []string
	for i := range 200 {
		stmts = append(stmts, "INSERT INTO d.t VALUES ("+strconv.Itoa(i)+", 'x')")
	}
	sandbox.MustExec(t, db, append(stmts, "FLUSH BINARY LOGS")...)
	files, err := src.BinlogFiles()
	if err != nil {
		t.Fatal(err)
	}
	file := files[len(files)-2]

	code, out, errs := analyzeRun(t, "--json", "--catalog", src.URL(), "--calibrate", tgt.URL(), file)
	var r analyze.Report
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
		t.Fatalf("exit %d, %v\n%s", code, err, errs)
	}
	if c := r.Model.Costs; !strings.HasPrefix(c.Source, "calibrated on ") || c.ReadTxn <= 0 || r.Summary.Transactions != 200 {
		t.Errorf("%d transactions, calibrated costs %+v", r.Summary.Transactions, c)
	}
	checkAnalyzeFlags(t, errs)

	code, _, errs = analyzeRun(t, "--catalog", "binlog", "--calibrate", tgt.URL(), file)
	if code == 0 || !strings.Contains(errs, "--catalog") {
		t.Errorf("no server has the table: exit %d, want an error that says to give --catalog\n%s", code, errs)
	}
	checkAnalyzeFlags(t, errs)

	// The reader's limits are analyze's flags too: its errors name them.
	code, _, errs = analyzeRun(t, "--max-event-size", "200", file)
	if code != 2 || !strings.Contains(errs, "raise --max-event-size") {
		t.Errorf("an event over --max-event-size: exit %d, want 2 and the flag named\n%s", code, errs)
	}
	checkAnalyzeFlags(t, errs)
}
