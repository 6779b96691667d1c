package postgres

import (
	"errors"
	"flag"
	"os"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/ddl.golden")

// TestTranslateGolden translates every statement of testdata/ddl.sql
// (default database "db"; the third with --lowercase-names and
// --zero-dates=null) and compares with testdata/ddl.golden, reviewed by hand.
func TestTranslateGolden(t *testing.T) {
	in, err := os.ReadFile("testdata/ddl.sql")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for i, stmt := range strings.Split(string(in), "\n----\n") {
		o := Options{}
		if i == 1 || i == 14 {
			o = Options{LowercaseNames: true, ZeroDateNull: true}
		}
		stmt = strings.TrimSpace(stmt)
		got, err := Translate(stmt, "db", o)
		out.WriteString("==== " + short(stmt) + "\n")
		if err != nil {
			if !errors.Is(err, ErrNotTranslated) && !errors.Is(err, ErrUnsupported) {
				t.Errorf("statement %d: error %v wraps neither ErrNotTranslated nor ErrUnsupported", i, err)
			}
			out.WriteString("ERROR: " + err.Error() + "\n")
			continue
		}
		for _, s := range got {
			out.WriteString(s + ";\n")
		}
	}
	if *update {
		if err := os.WriteFile("testdata/ddl.golden", []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/ddl.golden")
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("translation differs from testdata/ddl.golden (go test -update to rewrite, then review):\n%s", out.String())
	}
}

// TestAddColumnAtSourceTime: with the source's time of the ALTER (Now),
// the rows an ADD COLUMN ... DEFAULT CURRENT_TIMESTAMP fills get it, cut
// to the column's fractional digits (a DATETIME in the session's zone),
// and the column keeps CURRENT_TIMESTAMP as its default; without, the
// default is PostgreSQL's clock.
func TestAddColumnAtSourceTime(t *testing.T) {
	const alter = "ALTER TABLE t ADD COLUMN a TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), " +
		"ADD COLUMN b DATETIME DEFAULT CURRENT_TIMESTAMP, ADD COLUMN c INT DEFAULT 1"
	o := Options{Now: time.Date(2001, 2, 3, 4, 5, 6, 567891000, time.UTC), NowZone: time.FixedZone("+01:00", 3600)}
	got, err := Translate(alter, "db", o)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(got, ";\n")
	for _, want := range []string{"DEFAULT '2001-02-03 04:05:06.567891+00'", "DEFAULT '2001-02-03 05:05:06'", "DEFAULT 1"} {
		if !strings.Contains(all, want) {
			t.Errorf("with Now: no %q in\n%s", want, all)
		}
	}
	if n := strings.Count(all, "SET DEFAULT CURRENT_TIMESTAMP"); n != 2 {
		t.Errorf("with Now: %d columns get CURRENT_TIMESTAMP back as their default, want 2:\n%s", n, all)
	}
	got, err = Translate(alter, "db", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(got, ";\n"); strings.Count(all, "DEFAULT CURRENT_TIMESTAMP") != 2 || strings.Contains(all, "SET DEFAULT") {
		t.Errorf("without Now:\n%s", all)
	}
}

// TestAddAutoIncrementColumn: the rows a table already holds are numbered
// in its primary key's order, as the source numbers them, not in
// PostgreSQL's physical order (replicated: TestReplicateIntoPostgres);
// under a larger auto_increment_increment, whose numbers are not
// reproduced, the ALTER is refused.
func TestAddAutoIncrementColumn(t *testing.T) {
	defs := Defs{}
	if _, err := TranslateDefs("CREATE TABLE t (a INT, b INT, PRIMARY KEY (b, a))", "db", Options{}, defs); err != nil {
		t.Fatal(err)
	}
	const alter = "ALTER TABLE t ADD COLUMN n INT NOT NULL AUTO_INCREMENT UNIQUE"
	got, err := TranslateDefs(alter, "db", Options{}, defs.Clone())
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(got, ";\n")
	number := strings.Index(all, `row_number() OVER (ORDER BY "b", "a")`)
	key := strings.Index(all, "CREATE UNIQUE INDEX")
	if number < 0 || key < number || !strings.Contains(all, `setval(pg_get_serial_sequence('"db"."t"', 'n')`) {
		t.Errorf("no renumbering in the primary key's order before the unique index, and the sequence past it:\n%s", all)
	}
	_, err = TranslateDefs(alter, "db", Options{AutoIncIncrement: 5}, defs.Clone())
	if !errors.Is(err, ErrNotTranslated) || !strings.Contains(err.Error(), "auto_increment_increment=5") {
		t.Errorf("under auto_increment_increment=5: %v, want it refused", err)
	}
}
