package postgres

import (
	"context"
	"reflect"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// A copy killed after FinishTable or FinishCopy ran runs them again when
// it resumes: the second time builds nothing twice and fails on nothing.
// The table is created without keys; they come with FinishTable, the
// foreign keys (a child created before its parent) with FinishCopy.
func TestPGFinishTwice(t *testing.T) {
	ctx := context.Background()
	pg := sandbox.MustStartPostgres(t)
	tgt, err := OpenCopy(ctx, pg.URL("postgres"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	if err := tgt.Prepare(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	var defs []*TableDef
	for _, create := range []string{
		"CREATE TABLE `child` (`id` int NOT NULL AUTO_INCREMENT, `p` int DEFAULT NULL, PRIMARY KEY (`id`), KEY `p` (`p`), CONSTRAINT `fk` FOREIGN KEY (`p`) REFERENCES `parent` (`id`))",
		"CREATE TABLE `parent` (`id` int NOT NULL, `u` varchar(10) DEFAULT NULL, PRIMARY KEY (`id`), UNIQUE KEY `u` (`u`))",
	} {
		d, err := ParseCreateTable(create, "s")
		if err != nil {
			t.Fatal(err)
		}
		if err := tgt.CreateTable(ctx, "default", d, create); err != nil {
			t.Fatal(err)
		}
		defs = append(defs, d)
	}
	db := sandbox.MustOpenPostgres(t, pg, "postgres")
	state := func() (constraints, indexes []string) {
		rows, err := db.Query(`SELECT conname || ' ' || contype::text FROM pg_constraint WHERE connamespace = 's'::regnamespace
			UNION ALL SELECT '' ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			rows.Scan(&s)
			constraints = append(constraints, s)
		}
		rows.Close()
		rows, err = db.Query("SELECT indexname FROM pg_indexes WHERE schemaname = 's' UNION ALL SELECT '' ORDER BY 1")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			rows.Scan(&s)
			indexes = append(indexes, s)
		}
		rows.Close()
		return constraints, indexes
	}
	if c, i := state(); len(c) != 1 || len(i) != 1 {
		t.Fatalf("before the rows: constraints %q, indexes %q, want none", c[1:], i[1:])
	}
	sandbox.MustExec(t, db, "INSERT INTO s.parent VALUES (1, 'a'), (2, NULL)", "INSERT INTO s.child VALUES (7, 1), (8, NULL)")
	var first [2][]string
	for run := 1; run <= 2; run++ {
		for _, d := range defs {
			if err := tgt.FinishTable(ctx, d); err != nil {
				t.Fatalf("run %d: FinishTable %s: %v", run, d.Name, err)
			}
		}
		if err := tgt.FinishCopy(ctx, defs); err != nil {
			t.Fatalf("run %d: FinishCopy: %v", run, err)
		}
		c, i := state()
		if run == 1 {
			first = [2][]string{c, i}
			want := [2][]string{{"", "child_fk f", "child_pkey p", "parent_pkey p"}, {"", "child_p", "child_pkey", "parent_pkey", "parent_u"}}
			if !reflect.DeepEqual(first, want) {
				t.Fatalf("after FinishTable and FinishCopy: %q, want %q", first, want)
			}
		} else if !reflect.DeepEqual([2][]string{c, i}, first) {
			t.Fatalf("after a second run: %q, want the first's %q", [2][]string{c, i}, first)
		}
	}
	var next int
	db.QueryRow("INSERT INTO s.child (p) VALUES (2) RETURNING id").Scan(&next)
	if next != 9 {
		t.Fatalf("next identity after the rows: %d, want 9", next)
	}
}
