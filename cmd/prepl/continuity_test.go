package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/sandbox"
)

// continuitySource writes a keyless table (a transaction applied twice
// leaves a duplicate row) over three binlog files: file 1 creates it and
// inserts 1-3, file 2 inserts 4-6, file 3 inserts 7-9. It returns the
// files (the last one empty, still open) and the GTID of the insert of 5.
func continuitySource(t *testing.T) (*sandbox.Server, []string, string) {
	t.Helper()
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, db, "CREATE DATABASE c", "CREATE TABLE c.t (v INT)")
	var gtid5 string
	for v := 1; v <= 9; v++ {
		sandbox.MustExec(t, db, fmt.Sprintf("INSERT INTO c.t VALUES (%d)", v))
		if v == 5 {
			if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&gtid5); err != nil {
				t.Fatal(err)
			}
		}
		if v%3 == 0 {
			sandbox.MustExec(t, db, "FLUSH BINARY LOGS")
		}
	}
	files := binlogFiles(t, src)
	if len(files) < 4 {
		t.Fatalf("want at least 4 binlog files, got %v", files)
	}
	return src, files, gtid5
}

// values lists c.t's values in order, "" when the table does not exist.
func values(t *testing.T, db *sql.DB) string {
	t.Helper()
	var exists int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'c' AND TABLE_NAME = 't'").Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists == 0 {
		return ""
	}
	var s sql.NullString
	if err := db.QueryRow("SELECT GROUP_CONCAT(v ORDER BY v) FROM c.t").Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s.String
}

// copyAs copies a binlog file under another name.
func copyAs(t *testing.T, path, name string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

func positionRows(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + mysql.PositionSchema + ".position").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReplayRefusesBrokenFileSet: a gap, a repeat and a wrong order are
// refused with exit 2 before anything is applied; the complete set in order
// (in two runs, the first stopped by --stop-gtid) gives the source's rows,
// and a third run applies nothing twice.
func TestReplayRefusesBrokenFileSet(t *testing.T) {
	src, files, gtid5 := continuitySource(t)
	f1, f2, f3 := files[0], files[1], files[2]
	n := func(p string) string { return filepath.Base(p) }
	tgt := targetServer(t)
	tdb := sandbox.MustOpen(t, tgt, "")
	replay := func(args ...string) (int, string) {
		return prepl(t, append([]string{"replay", "--target", tgt.URL(), "--workers", "4", "--progress", "0"}, args...)...)
	}
	refused := []struct {
		name  string
		files []string
		want  []string
	}{
		{"gap", []string{f1, f3}, []string{n(f3) + " starts at 0-1-", "but " + n(f1) + " ends at 0-1-", "are missing (" + n(f2) + " is missing?)", "--allow-gaps"}},
		{"repeat", []string{f1, f2, f2, f3}, []string{n(f2) + " is given twice"}},
		{"wrong order", []string{f2, f1, f3}, []string{"out of order", "give them in the order " + n(f1) + " " + n(f2) + " " + n(f3)}},
		{"copy under another name", []string{f1, copyAs(t, f1, "other.000002")}, []string{"start at the same GTID position"}},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			code, out := replay(c.files...)
			if code != 2 {
				t.Fatalf("exit %d, want 2:\n%s", code, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output does not say %q:\n%s", w, out)
				}
			}
			if v, p := values(t, tdb), positionRows(t, tdb); v != "" || p != 0 {
				t.Fatalf("target touched: rows %q, %d position rows", v, p)
			}
		})
	}

	// The complete set, stopped halfway by --stop-gtid, then resumed: the
	// selection and the stored position inside file 2 trip nothing.
	mustPrepl(t, append([]string{"replay", "--target", tgt.URL(), "--workers", "4", "--progress", "0", "--stop-gtid", gtid5}, files...)...)
	if got := values(t, tdb); got != "1,2,3,4,5" {
		t.Fatalf("after --stop-gtid %s: rows %q, want 1,2,3,4,5", gtid5, got)
	}
	for run := 0; run < 2; run++ {
		if code, out := replay(files...); code != 0 {
			t.Fatalf("run %d: exit %d:\n%s", run+1, code, out)
		}
		if got := values(t, tdb); got != "1,2,3,4,5,6,7,8,9" {
			t.Fatalf("run %d: rows %q, want 1..9 once each", run+1, got)
		}
	}
	sameRows(t, src, tgt)
}

// TestReplayAllowGaps: a stored position followed by a file that starts
// after a gap is refused; --allow-gaps applies the subset given, with a
// warning naming the gap.
func TestReplayAllowGaps(t *testing.T) {
	_, files, _ := continuitySource(t)
	f1, f3 := files[0], files[2]
	tgt := targetServer(t)
	tdb := sandbox.MustOpen(t, tgt, "")
	replay := func(args ...string) (int, string) {
		return prepl(t, append([]string{"replay", "--target", tgt.URL(), "--progress", "0"}, args...)...)
	}
	mustPrepl(t, "replay", "--target", tgt.URL(), "--progress", "0", f1)
	if got := values(t, tdb); got != "1,2,3" {
		t.Fatalf("after %s: rows %q, want 1,2,3", filepath.Base(f1), got)
	}
	code, out := replay(f3)
	if code != 2 || !strings.Contains(out, "the stored position ends at 0-1-") || !strings.Contains(out, filepath.Base(f3)+" starts at 0-1-") {
		t.Fatalf("exit %d, want 2 naming the stored position and %s:\n%s", code, filepath.Base(f3), out)
	}
	if got := values(t, tdb); got != "1,2,3" {
		t.Fatalf("refused run applied something: rows %q", got)
	}
	code, out = replay("--allow-gaps", f3)
	if code != 0 || !strings.Contains(out, "--allow-gaps") || !strings.Contains(out, "are missing") {
		t.Fatalf("exit %d, want 0 with a warning naming the gap:\n%s", code, out)
	}
	if got := values(t, tdb); got != "1,2,3,7,8,9" {
		t.Fatalf("after --allow-gaps: rows %q, want 1,2,3,7,8,9", got)
	}
	// The gap inside a file set, on a fresh target.
	tgt2 := targetServer(t)
	mustPrepl(t, "replay", "--target", tgt2.URL(), "--progress", "0", "--allow-gaps", f1, f3)
	if got := values(t, sandbox.MustOpen(t, tgt2, "")); got != "1,2,3,7,8,9" {
		t.Fatalf("%s %s with --allow-gaps: rows %q, want 1,2,3,7,8,9", filepath.Base(f1), filepath.Base(f3), got)
	}
}

// TestReplaySelectionNotInFiles: a --skip-gtid, --exclude-gtids or
// --include-gtids that none of the files holds (here the server id
// mistyped), or a --start-position past the first file's end, is refused
// with exit 2 before anything is applied, dry run or not: it would leave
// out (or select) nothing, and the transaction meant to be left out would
// be applied. The right GTIDs leave out the insert of 5.
func TestReplaySelectionNotInFiles(t *testing.T) {
	_, files, gtid5 := continuitySource(t)
	parts := strings.Split(gtid5, "-")
	wrong := parts[0] + "-9-" + parts[2]
	tgt := targetServer(t)
	tdb := sandbox.MustOpen(t, tgt, "")
	for _, c := range []struct{ flag, value, want string }{
		{"--skip-gtid", wrong, "--skip-gtid " + wrong + ": not in the files given"},
		{"--exclude-gtids", wrong, "--exclude-gtids " + wrong + ": none of its GTIDs is in the files given"},
		{"--include-gtids", wrong, "--include-gtids " + wrong + ": none of its GTIDs is in the files given"},
		{"--start-position", "99999", "--start-position 99999 is past the end of " + filepath.Base(files[0])},
	} {
		for _, run := range [][]string{{"--dry-run"}, {"--target", tgt.URL(), "--progress", "0"}} {
			code, out := prepl(t, append(append(append([]string{"replay"}, run...), c.flag, c.value), files...)...)
			if code != 2 || !strings.Contains(out, c.want) {
				t.Errorf("replay %v %s %s: exit %d, want 2 saying %q:\n%s", run, c.flag, c.value, code, c.want, out)
			}
		}
	}
	if v := values(t, tdb); v != "" {
		t.Fatalf("a refused replay applied rows %q", v)
	}
	mustPrepl(t, append([]string{"replay", "--target", tgt.URL(), "--progress", "0", "--skip-gtid", gtid5}, files...)...)
	if got := values(t, tdb); got != "1,2,3,4,6,7,8,9" {
		t.Fatalf("with --skip-gtid %s: rows %q, want 1..9 without 5", gtid5, got)
	}
	range5 := gtid5 + "-" + parts[2] // d-s-5-5
	tgt2 := targetServer(t)
	mustPrepl(t, append([]string{"replay", "--target", tgt2.URL(), "--progress", "0", "--exclude-gtids", wrong + "," + range5}, files...)...)
	if got := values(t, sandbox.MustOpen(t, tgt2, "")); got != "1,2,3,4,6,7,8,9" {
		t.Fatalf("with --exclude-gtids %s,%s: rows %q, want 1..9 without 5", wrong, range5, got)
	}
}
