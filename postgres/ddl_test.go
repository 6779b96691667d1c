package postgres

import (
	"errors"
	"flag"
	"os"
	"strings"
	"testing"
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
